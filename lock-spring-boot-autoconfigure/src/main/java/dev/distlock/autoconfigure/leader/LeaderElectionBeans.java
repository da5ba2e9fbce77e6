package dev.distlock.autoconfigure.leader;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Registers a {@link LeaderElection} bean for each election configured and enabled under
 * {@code distributed-lock.leader.elections.<name>}, named {@code <name>LeaderElection}
 * and qualified by {@code <name>}, so that {@code @Qualifier("<name>") LeaderElection}
 * injects it (and a plain {@code LeaderElection} does when only one is configured). Each
 * is the election of that name in the {@link LeaderElections} bean, which starts and
 * stops it. A bean of the same name that the application defines wins.
 */
final class LeaderElectionBeans implements BeanDefinitionRegistryPostProcessor {

	/** The suffix of each election bean's name. */
	static final String SUFFIX = "LeaderElection";

	private final Environment environment;

	LeaderElectionBeans(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
		DistributedLockLeaderProperties properties = Binder.get(this.environment)
			.bind("distributed-lock.leader", Bindable.of(DistributedLockLeaderProperties.class))
			.orElseGet(DistributedLockLeaderProperties::new);
		properties.getElections().forEach((name, election) -> {
			String beanName = name + SUFFIX;
			if (election.isEnabled() && !registry.containsBeanDefinition(beanName)) {
				registry.registerBeanDefinition(beanName, definition(name));
			}
		});
	}

	/**
	 * A factory-method definition rather than an instance supplier, so that ahead-of-time
	 * processing can generate it.
	 */
	private static RootBeanDefinition definition(String name) {
		RootBeanDefinition definition = new RootBeanDefinition(LeaderElectionBeans.class);
		definition.setFactoryMethodName("election");
		definition.setTargetType(LeaderElection.class);
		definition.setAutowireMode(AbstractBeanDefinition.AUTOWIRE_CONSTRUCTOR);
		definition.getConstructorArgumentValues().addIndexedArgumentValue(0, name);
		definition.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
		definition.setDescription("The leader election '" + name + "' of this instance");
		return definition;
	}

	/** The factory method of each election bean. */
	static LeaderElection election(String name, LeaderElections elections) {
		LeaderElection election = elections.get(name);
		if (election == null) {
			throw new IllegalStateException("The LeaderElections bean has no election '" + name
					+ "', configured under distributed-lock.leader.elections." + name
					+ ": a LeaderElections bean of the application's own must add it");
		}
		return election;
	}

}
