// The oversell demo: starts a run without the lock, then one with it, and plots each live
// from GET /demo/runs/{id}. Plain canvas, no libraries.
(function () {
  'use strict';

  const POLL_MS = 100;

  // Both runs' panels from one template; each result list is named result-<run>.
  for (const section of document.querySelectorAll('section.run')) {
    section.appendChild(document.getElementById('run-panel').content.cloneNode(true));
    section.querySelector('h2').innerHTML = section.dataset.title;
    section.querySelector('.result').id = 'result-' + section.id.substring('run-'.length);
  }

  function canvasContext(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth, height = canvas.clientHeight;
    if (canvas.width !== width * ratio || canvas.height !== height * ratio) {
      canvas.width = width * ratio;
      canvas.height = height * ratio;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '11px system-ui, sans-serif';
    return { ctx, width, height };
  }

  function axes(ctx, width, height, pad, maxX, maxY, xLabel) {
    ctx.strokeStyle = '#c3c9d4';
    ctx.fillStyle = '#4a5263';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(pad.left, pad.top);
    ctx.lineTo(pad.left, height - pad.bottom);
    ctx.lineTo(width - pad.right, height - pad.bottom);
    ctx.stroke();
    ctx.textAlign = 'right';
    ctx.fillText(String(Math.round(maxY)), pad.left - 4, pad.top + 8);
    ctx.fillText('0', pad.left - 4, height - pad.bottom);
    ctx.textAlign = 'right';
    ctx.fillText(xLabel(maxX), width - pad.right, height - pad.bottom + 14);
  }

  // Accepted and oversold orders over time, with the stock as a dashed line.
  function drawProgress(canvas, run) {
    const { ctx, width, height } = canvasContext(canvas);
    const pad = { left: 36, right: 10, top: 10, bottom: 20 };
    const maxX = Math.max(run.elapsedMillis, 100);
    const maxY = Math.max(run.stock * 1.2, run.accepted * 1.1, 10);
    const x = (t) => pad.left + (width - pad.left - pad.right) * t / maxX;
    const y = (v) => height - pad.bottom - (height - pad.top - pad.bottom) * v / maxY;
    axes(ctx, width, height, pad, maxX, maxY, (v) => Math.round(v) + ' ms');
    ctx.setLineDash([5, 4]);
    ctx.strokeStyle = '#9aa3b2';
    ctx.beginPath();
    ctx.moveTo(x(0), y(run.stock));
    ctx.lineTo(x(maxX), y(run.stock));
    ctx.stroke();
    ctx.setLineDash([]);
    const series = [['#1f6feb', (accepted) => accepted], ['#c62828', (accepted) => Math.max(0, accepted - run.stock)]];
    for (const [colour, value] of series) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x(0), y(0));
      let accepted = 0;
      for (const o of run.outcomes) {
        if (o.outcome === 'accepted') {
          accepted++;
        }
        ctx.lineTo(x(o.atMillis), y(value(accepted)));
      }
      ctx.lineTo(x(run.elapsedMillis), y(value(accepted)));
      ctx.stroke();
    }
  }

  // One bar per answered order: how long it waited for the lock.
  function drawWaits(canvas, run) {
    const { ctx, width, height } = canvasContext(canvas);
    const pad = { left: 36, right: 10, top: 10, bottom: 20 };
    const maxX = Math.max(run.orders, 1);
    const maxY = Math.max(1, ...run.outcomes.map((o) => o.lockWaitMillis));
    axes(ctx, width, height, pad, maxX, maxY, (v) => v + ' orders');
    const barWidth = Math.max(1, (width - pad.left - pad.right) / maxX - 0.5);
    run.outcomes.forEach((o, i) => {
      const h = (height - pad.top - pad.bottom) * o.lockWaitMillis / maxY;
      ctx.fillStyle = o.outcome === 'accepted' ? '#2e7d32' : '#9aa3b2';
      ctx.fillRect(pad.left + (width - pad.left - pad.right) * i / maxX, height - pad.bottom - h, barWidth, h);
    });
  }

  function percentile(values, p) {
    if (values.length === 0) {
      return 0;
    }
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  }

  function showResult(dl, run) {
    const waits = run.outcomes.map((o) => o.lockWaitMillis);
    const fields = [
      ['stock', run.stock], ['accepted', run.accepted], ['sold out', run.soldOut],
      ['oversold', run.oversold], ['failed', run.failed], ['left', run.remaining === null ? '…' : run.remaining],
      ['wait p50', percentile(waits, 0.5).toFixed(1) + ' ms'], ['wait max', percentile(waits, 1).toFixed(1) + ' ms'],
    ];
    dl.innerHTML = fields.map(([name, value]) =>
      '<dt>' + name + '</dt><dd' + (name === 'oversold' ? ' class="' + (run.oversold > 0 ? 'bad' : 'good') + '"' : '')
      + '>' + value + '</dd>').join('');
    dl.dataset.accepted = run.accepted;
    dl.dataset.oversold = run.oversold;
    dl.dataset.done = run.done;
  }

  async function json(response) {
    if (!response.ok) {
      throw new Error(response.status + ' ' + (await response.text()));
    }
    return response.json();
  }

  async function runOnce(lock, section, params) {
    const dl = section.querySelector('.result');
    delete dl.dataset.done;
    let run = await json(await fetch('demo/runs?lock=' + lock + '&' + params, { method: 'POST' }));
    for (;;) {
      drawProgress(section.querySelector('canvas.progress'), run);
      drawWaits(section.querySelector('canvas.waits'), run);
      showResult(dl, run);
      if (run.done) {
        if (run.error) {
          throw new Error(run.error);
        }
        return run;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      run = await json(await fetch('demo/runs/' + run.id));
    }
  }

  const button = document.getElementById('run');
  const status = document.getElementById('status');
  button.addEventListener('click', async () => {
    button.disabled = true;
    const params = ['stock', 'orders', 'concurrency']
      .map((name) => name + '=' + encodeURIComponent(document.getElementById(name).value)).join('&');
    try {
      status.textContent = 'Running without the lock…';
      const unlocked = await runOnce(false, document.getElementById('run-unlocked'), params);
      status.textContent = 'Running with the lock…';
      const locked = await runOnce(true, document.getElementById('run-locked'), params);
      status.textContent = 'Done: without the lock ' + unlocked.oversold + ' oversold, with it ' + locked.oversold + '.';
      status.dataset.state = 'done';
    }
    catch (error) {
      status.textContent = 'Failed: ' + error.message;
      status.dataset.state = 'failed';
    }
    finally {
      button.disabled = false;
    }
  });
})();
