package dev.distlock.spi;

import java.time.Duration;
import java.util.List;

import dev.distlock.inmemory.InMemoryLockProvider;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowable;

class LockRequestTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	@Test
	void aWritersLaterAttemptsTakeOneTokenAndSayWhetherAnIntentMayBeRecorded() {
		LockRequest first = LockRequest.exclusive("k", LEASE).withTokens(33).withWriter("w", LEASE);
		assertThat(first.writer()).isTrue();
		assertThat(first.waiting()).isTrue();
		assertThat(first.keepsPlace()).as("before any attempt").isFalse();
		LockRequest afterBusy = first.afterAttempt(true);
		assertThat(afterBusy.tokens()).isEqualTo(1);
		assertThat(afterBusy.intentRecorded()).isTrue();
		assertThat(afterBusy.keepsPlace()).isTrue();
		LockRequest afterLateAcquire = afterBusy.afterAttempt(false);
		assertThat(afterLateAcquire.intentRecorded()).isFalse();
		assertThat(afterLateAcquire.keepsPlace()).isFalse();
	}

	@Test
	void anyOtherRequestIsAskedAgainAsItWas() {
		LockRequest plain = LockRequest.exclusive("k", LEASE).withWaiting(true).withTokens(33);
		assertThat(plain.afterAttempt(true)).isSameAs(plain);
		LockRequest fair = LockRequest.fair("k", LEASE, "w", LEASE);
		assertThat(fair.afterAttempt(true)).isSameAs(fair);
		assertThat(fair.keepsPlace()).as("a fair waiter keeps its place until it leaves").isTrue();
	}

	@Test
	void aRequestThatNoStoreCouldHonourIsRefusedWhenItIsMade() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.all(List.of("b", "a"), LEASE))
			.withMessageContaining("sorted");
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.all(List.of("a", "a"), LEASE));
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.permit("k", 0, LEASE));
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.shared("k", LEASE).withTokens(2));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockRequest(List.of("k"), LockKind.FAIR, LEASE, true, null, 0, 1, LEASE, false));
		assertThatIllegalArgumentException().isThrownBy(() -> new LockRequest(List.of("a", "b"), LockKind.EXCLUSIVE,
				LEASE, false, null, 0, 1, Duration.ZERO, false));
	}

	@Test
	void aKindTheStoreDoesNotOfferIsRefusedNamingTheStoreAndTheKind() {
		LockProvider plain = new InMemoryLockProvider()::tryLock;
		assertThat(Capabilities.refusal(plain, LockKind.EXCLUSIVE)).isEmpty();
		assertThat(Capabilities.refusal(plain, LockKind.MULTI)).hasValueSatisfying((reason) -> assertThat(reason)
			.contains("Multi-key locks", "the " + plain.storeName() + " store", "lock kind MULTI"));
		Throwable refused = catchThrowable(() -> Capabilities.check(plain, LockKind.SHARED, "k"));
		assertThat(refused).isInstanceOf(UnsupportedOperationException.class)
			.hasMessageContaining("Lock 'k'")
			.hasMessageContaining("lock kind SHARED");
	}

	@Test
	void aFailedAnswerIsThrownAsTheStoreRaisedIt() {
		IllegalStateException failure = new IllegalStateException("store down");
		Throwable thrown = catchThrowable(() -> LockAttempt.join(LockAttempt.of(() -> {
			throw failure;
		})));
		assertThat(thrown).isSameAs(failure);
	}

}
