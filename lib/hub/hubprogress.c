/* hubprogress.c: per-file and total progress bars on stderr */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "hub.h"
#include "hubprogress.h"

typedef struct {
	char name[64];
	uint64_t size, have;
	int used;
} slot;

struct tf_progress {
	pthread_mutex_t mu;
	slot *slot;
	int nslot, nfiles, ndone, drawn;
	uint64_t total, got, fetched;   /* expected, counted so far, read from the network */
	double t0, last;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int columns(void)
{
	struct winsize ws;

	if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		return ws.ws_col < 200 ? ws.ws_col : 200;
	return 80;
}

static void bar(char *out, int width, uint64_t have, uint64_t size)
{
	int fill = size ? (int)((double)have / size * width) : 0;

	if (fill > width)
		fill = width;
	out[0] = '[';
	for (int i = 0; i < width; i++)
		out[1 + i] = i < fill ? '=' : i == fill ? '>' : ' ';
	out[width + 1] = ']';
	out[width + 2] = 0;
}

/* called with the mutex held */
static void draw(tf_progress *p, int force)
{
	double t = now();
	int cols = columns(), barw;
	char line[512], label[48], b[128], h1[16], h2[16], h3[16];
	char *buf;
	size_t len = 0, cap;

	if (!force && t - p->last < 0.1)
		return;
	p->last = t;
	barw = cols - 58;
	if (barw > 40)
		barw = 40;
	if (barw < 10)
		barw = 10;
	cap = (size_t)(p->nslot + 2) * (sizeof line + 16);
	buf = tf_malloc(cap);
	if (p->drawn > 1)
		len += sprintf(buf + len, "\r\033[%dA", p->drawn - 1);
	else if (p->drawn == 1)
		len += sprintf(buf + len, "\r");
	for (int i = 0; i < p->nslot; i++) {
		slot *s = &p->slot[i];

		line[0] = 0;
		if (s->used) {
			bar(b, barw, s->have, s->size);
			snprintf(line, sizeof line, "%-24.24s %3d%% %s %s/%s", s->name,
				 s->size ? (int)(100.0 * s->have / s->size) : 0, b,
				 tf_hub_human(s->have, h1), s->size ? tf_hub_human(s->size, h2) : "?");
		}
		line[cols - 1 < (int)sizeof line ? cols - 1 : (int)sizeof line - 1] = 0;
		len += sprintf(buf + len, "\033[K%s\n", line);
	}
	bar(b, barw, p->got, p->total);
	snprintf(label, sizeof label, "total %d/%d files", p->ndone, p->nfiles);
	snprintf(line, sizeof line, "%-24s %3d%% %s %s/%s %s/s", label,
		 p->total ? (int)(100.0 * p->got / p->total) : 0, b, tf_hub_human(p->got, h1),
		 p->total ? tf_hub_human(p->total, h2) : "?",
		 tf_hub_human((uint64_t)(p->fetched / (t - p->t0 > 0.01 ? t - p->t0 : 0.01)), h3));
	line[cols - 1 < (int)sizeof line ? cols - 1 : (int)sizeof line - 1] = 0;
	len += sprintf(buf + len, "\033[K%s", line);
	p->drawn = p->nslot + 1;
	fwrite(buf, 1, len, stderr);
	fflush(stderr);
	free(buf);
}

tf_progress *tf_progress_new(int on, int slots, int nfiles, uint64_t total)
{
	tf_progress *p;

	if (!on)
		return NULL;
	p = tf_calloc(1, sizeof *p);
	pthread_mutex_init(&p->mu, NULL);
	p->nslot = slots < 1 ? 1 : slots;
	p->slot = tf_calloc(p->nslot, sizeof *p->slot);
	p->nfiles = nfiles;
	p->total = total;
	p->t0 = now();
	return p;
}

int tf_progress_start(tf_progress *p, const char *name, uint64_t size, uint64_t have)
{
	int i;

	if (!p)
		return -1;
	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->nslot && p->slot[i].used; i++)
		;
	if (i == p->nslot)
		i = -1;
	else {
		const char *base = strrchr(name, '/');

		snprintf(p->slot[i].name, sizeof p->slot[i].name, "%s", base ? base + 1 : name);
		p->slot[i].size = size;
		p->slot[i].have = have;
		p->slot[i].used = 1;
		p->got += have;
		draw(p, 1);
	}
	pthread_mutex_unlock(&p->mu);
	return i;
}

void tf_progress_add(tf_progress *p, int i, uint64_t n)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (i >= 0)
		p->slot[i].have += n;
	p->got += n;
	p->fetched += n;
	draw(p, 0);
	pthread_mutex_unlock(&p->mu);
}

void tf_progress_rewind(tf_progress *p, int i, uint64_t n)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (i >= 0)
		p->slot[i].have -= n < p->slot[i].have ? n : p->slot[i].have;
	p->got -= n < p->got ? n : p->got;
	pthread_mutex_unlock(&p->mu);
}

void tf_progress_skip(tf_progress *p, uint64_t size)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->ndone++;
	p->got += size;
	pthread_mutex_unlock(&p->mu);
}

void tf_progress_done(tf_progress *p, int i)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (i >= 0)
		p->slot[i].used = 0;
	p->ndone++;
	draw(p, 1);
	pthread_mutex_unlock(&p->mu);
}

void tf_progress_free(tf_progress *p)
{
	char h1[16], h2[16];
	double t;

	if (!p)
		return;
	t = now() - p->t0;
	if (p->drawn) {
		if (p->drawn > 1)
			fprintf(stderr, "\r\033[%dA\033[J", p->drawn - 1);
		else
			fprintf(stderr, "\r\033[J");
		fprintf(stderr, "%d/%d files, %s fetched in %.1f s (%s/s)\n", p->ndone, p->nfiles,
			tf_hub_human(p->fetched, h1), t,
			tf_hub_human((uint64_t)(p->fetched / (t > 0.01 ? t : 0.01)), h2));
		fflush(stderr);
	}
	pthread_mutex_destroy(&p->mu);
	free(p->slot);
	free(p);
}
