package dev.distlock.autoconfigure.leader;

import dev.distlock.LeaderElections;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.util.function.SingletonSupplier;

/**
 * The advisor is infrastructure, made before ordinary beans: it finds the elections on
 * the first call.
 */
final class LazyLeaderOnlyInterceptor implements MethodInterceptor {

	private final SingletonSupplier<LeaderOnlyInterceptor> delegate;

	LazyLeaderOnlyInterceptor(ObjectProvider<LeaderElections> elections) {
		this.delegate = SingletonSupplier.of(() -> new LeaderOnlyInterceptor(elections.getObject()));
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		return this.delegate.obtain().invoke(invocation);
	}

}
