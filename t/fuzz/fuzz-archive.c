/*
 * fuzz-archive.c: an archive (tar, cpio, zip, 7z, compressed or not)
 * through libarchive into a hub cache of its own, every member checked
 */
#include <ftw.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "hub/archive_ingest.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char cache[] = "/tmp/tf-fuzz-archive.XXXXXX";
	static int made;
	static const char *const all[] = { "*" };
	char path[64], *snap = NULL;
	int fd;

	if (!made++ && !mkdtemp(cache))
		abort();
	if ((fd = fuzz_file(data, size, path)) < 0)
		return 0;
	tf_ingest_opts o = { .cache = cache, .src = path, .repo = "fuzz/archive",
			     .filter = { all, 1, NULL, 0 } };
	if (tf_archive_ingest(&o, &snap) == 0) {
		/* what an archive that is taken files is gone before the next */
		nftw(cache, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		if (mkdir(cache, 0700) < 0)
			abort();
	}
	free(snap);
	close(fd);
	return 0;
}
