/* pace.c: prompt chunks paced against decoding streams (pace.h) */
#include <time.h>

#include "pace.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void tf_pace_init(tf_pace *p, double share)
{
	*p = (tf_pace){ .share = share };
}

int tf_pace_chunk_ok(const tf_pace *p, int decoders)
{
	return !decoders || p->credit >= p->chunk;
}

void tf_pace_begin(tf_pace *p)
{
	p->t0 = now();
}

void tf_pace_end(tf_pace *p, int decoders, int chunk)
{
	tf_pace_took(p, decoders, chunk, now() - p->t0);
}

void tf_pace_took(tf_pace *p, int decoders, int chunk, double t)
{
	const double earn = p->share / (1 - p->share);

	if (!decoders)
		return;         /* no one was held back */
	if (!chunk) {
		/* the decode rounds' time, smoothed over about 8 rounds */
		p->decode = p->decode > 0 ? p->decode + (t - p->decode) / 8 : t;
		p->credit += earn * t;
		return;
	}
	const double d = p->decode > 0 ? p->decode : 0;
	p->chunk = t > d ? t - d : 0;
	p->credit += earn * d - p->chunk;
}
