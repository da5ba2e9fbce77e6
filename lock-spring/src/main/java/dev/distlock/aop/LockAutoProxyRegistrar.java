package dev.distlock.aop;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure an auto-proxy creator exists even when {@code spring.aop.auto=false} and no
 * {@code @EnableTransactionManagement} or {@code @EnableCaching} registered one: without
 * it, annotated methods would silently run unlocked. Registers the infrastructure-only
 * creator, which an application's own creator (from AspectJ auto-proxying, say)
 * supersedes.
 */
public class LockAutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
	}

}
