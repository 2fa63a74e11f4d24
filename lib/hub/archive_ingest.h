/*
 * archive_ingest.h: a checkpoint from an archive or a folder into the hub
 * cache, in the same layout as a download.
 *
 * Archives (tar, cpio, zip, 7z; gzip, bzip2, xz, lzma, lzip, zstd, lz4 or
 * compress around them) are read with libarchive, from a file or "-" for
 * stdin. Nothing is ever extracted by a member's name: each regular file is
 * copied into a private staging folder while its sha256 is computed, and
 * only when the whole archive has been read and found sound are the blobs
 * renamed into blobs/SHA256 and linked under snapshots/. A member that is
 * absolute, has a ".." part, is a link leading outside the archive, or is a
 * device, FIFO or socket makes the whole ingest fail with nothing left in
 * the repository.
 *
 * A regular member the include patterns cannot take, with or without its
 * first folder, is skipped unread; should a link they take end at one, a
 * file is read a second time for it, and stdin is refused.
 *
 * If every member sits under one top folder, that folder is dropped. The
 * snapshot is named by the git blob hash of a manifest in sha256sum(1)
 * form ("SHA256  PATH" lines sorted by PATH), so the same content gives
 * the same snapshot. refs/REV (main by default) points at it.
 */
#ifndef TF_ARCHIVE_INGEST_H
#define TF_ARCHIVE_INGEST_H

#include "hub.h"

typedef struct {
	const char *cache;
	const char *src;        /* archive, "-" or folder */
	const char *repo;       /* ORG/NAME to file it under */
	const char *rev;        /* NULL = "main" */
	tf_hub_filter filter;
} tf_ingest_opts;

int tf_archive_ingest(const tf_ingest_opts *o, char **snapshot);

#endif
