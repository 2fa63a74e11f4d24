/* env.h: the switches the environment gives: a variable set to 0 turns off
 * a path that has a slower or older alternative kept for comparison, one
 * set to 1 turns on a path that is off by default */
#ifndef TF_ENV_H
#define TF_ENV_H

#include <stdlib.h>

/* whether environment variable name is set to a value starting with 0 */
static inline int tf_env_off(const char *name)
{
	const char *e = getenv(name);

	return e && *e == '0';
}

/* tf_env_off(name) read once, into *seen (-1 until then): for switches
 * asked at every launch */
static inline int tf_env_off_once(const char *name, int *seen)
{
	if (*seen < 0)
		*seen = tf_env_off(name);
	return *seen;
}

/* whether environment variable name is set to a value starting with 1 */
static inline int tf_env_on(const char *name)
{
	const char *e = getenv(name);

	return e && *e == '1';
}

#endif
