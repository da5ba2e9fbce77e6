package dev.distlock.autoconfigure;

import dev.distlock.aop.DistributedLockAdvisor;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;

/**
 * Fails startup when the {@code @DistributedLock} advice would run inside the
 * {@code @Transactional} advice of the same method: the lock would then be released
 * before the transaction commits, and the next holder could read data this one has not
 * committed yet. It would also hold a database connection while waiting for the lock.
 */
final class TransactionOrderCheck implements SmartInitializingSingleton {

	private final ListableBeanFactory beanFactory;

	TransactionOrderCheck(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (DistributedLockAdvisor lock : this.beanFactory.getBeansOfType(DistributedLockAdvisor.class, false, false)
			.values()) {
			for (BeanFactoryTransactionAttributeSourceAdvisor tx : this.beanFactory
				.getBeansOfType(BeanFactoryTransactionAttributeSourceAdvisor.class, false, false)
				.values()) {
				if (lock.getOrder() >= tx.getOrder()) {
					throw new IllegalStateException("The @DistributedLock advice (order " + lock.getOrder()
							+ ", distributed-lock.order) would run inside the @Transactional advice (order "
							+ tx.getOrder() + "), so a lock would be released before its transaction commits."
							+ " Give distributed-lock.order a value below " + tx.getOrder() + " (the default, "
							+ Integer.MAX_VALUE + " - 100, is below the default transaction order)"
							+ " or raise the order of @EnableTransactionManagement.");
				}
			}
		}
	}

}
