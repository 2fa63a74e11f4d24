/*
 * hubpull.h: bring a repository revision from the hub into the cache.
 *
 *   GET  {endpoint}/api/models/{repo}/revision/{rev}?blobs=true -> commit, file list
 *   HEAD {endpoint}/{repo}/resolve/{commit}/{path}              -> etag, size
 *   GET  the same URL (redirects followed, Range: bytes=N- to resume)
 *
 * A file already linked in snapshots/COMMIT, or whose blob (named in the
 * listing) is present, costs no request. A blob is written as
 * blobs/ETAG.incomplete under the blob's lock, checked against its etag
 * while it streams, and renamed into place only when whole and right; a
 * broken transfer leaves the .incomplete file for the next run to resume.
 * refs/REV is written last, when every file of the snapshot is in place.
 */
#ifndef TF_HUBPULL_H
#define TF_HUBPULL_H

#include "hub.h"

typedef struct {
	const char *cache;      /* the cache folder (tf_hub_cache_dir) */
	const char *repo;       /* ORG/NAME */
	const char *rev;        /* branch, tag or commit; NULL = "main" */
	tf_hub_filter filter;
	int jobs;               /* downloads at once, >= 1 */
	int offline;            /* resolve from the cache only */
	int progress;           /* draw progress bars on stderr */
	long deadline_s;        /* limit of each request; 0: scaled to its size (hubpull.c) */
} tf_pull_opts;

/* on success *snapshot is the malloc'd snapshot folder */
int tf_hub_pull(const tf_pull_opts *o, char **snapshot);

#endif
