/* room.c: whether a context's caches fit where the sequences run (decoder.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "decoder.h"
#include "gpu/gpu.h"

/* the host's available memory: MemAvailable (free memory plus the page
 * cache the kernel would give back), else free pages from sysconf */
static uint64_t host_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;

	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				fclose(f);
				return (uint64_t)kb * 1024;
			}
		fclose(f);
	}
	long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* b as the messages show it */
static const char *size(uint64_t b, char buf[32])
{
	if (b < 1024 * 1024)
		snprintf(buf, 32, "%.1f KiB", b / 1024.0);
	else if (b < 1024ULL * 1024 * 1024)
		snprintf(buf, 32, "%.1f MiB", b / (1024.0 * 1024.0));
	else
		snprintf(buf, 32, "%.1f GiB", b / (1024.0 * 1024.0 * 1024.0));
	return buf;
}

uint64_t tf_decoder_room(const tf_model *m)
{
	const char *e = getenv("TF_MEM_AVAILABLE");
	char *end;

	/* a test's stand-in for the machine's figure */
	if (e && *e) {
		unsigned long long v = strtoull(e, &end, 10);
		int sh = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
		return (uint64_t)v << sh;
	}
	return m->gpu ? tf_gpu_free_bytes() : host_available();
}

int tf_decoder_check_room(const tf_model *m, int seqs)
{
	const tf_config *c = &m->c;
	uint64_t fixed = tf_decoder_cache_bytes(m, 0), per = tf_decoder_cache_bytes(m, 1) - fixed;
	uint64_t need = tf_decoder_cache_bytes(m, c->ctx) * (uint64_t)seqs, room = tf_decoder_room(m);
	char a[32], b[32], each[48] = "";
	const char *where = m->gpu ? "free on the GPU" : "of memory available";

	if (need <= room)
		return 0;
	if (seqs > 1)
		snprintf(each, sizeof each, " for each of %d sequences", seqs);
	if (room / seqs <= fixed + per)
		return tf_err("a context of %d positions needs %s of cache%s, %s %s: no context fits", c->ctx,
			      size(need / seqs, a), each, size(room, b), where);
	uint64_t fits = (room / seqs - fixed) / (per ? per : 1);
	return tf_err("a context of %d positions needs %s of cache%s, %s %s: --ctx %llu fits", c->ctx,
		      size(need / seqs, a), each, size(room, b), where, (unsigned long long)fits);
}
