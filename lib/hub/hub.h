/*
 * hub.h: the Hugging Face hub cache on disk, shared with huggingface_hub,
 * mlx-lm and llama.cpp.
 *
 *   CACHE/CACHEDIR.TAG
 *   CACHE/.locks/models--ORG--NAME/ETAG.lock      flock(2) while a blob is written
 *   CACHE/models--ORG--NAME/refs/REV              40-hex commit, no newline
 *   CACHE/models--ORG--NAME/blobs/ETAG            content; ETAG = sha256 (64 hex) or
 *                                                 git blob sha1 (40 hex)
 *   CACHE/models--ORG--NAME/blobs/ETAG.incomplete a download in progress
 *   CACHE/models--ORG--NAME/snapshots/COMMIT/PATH relative symlink to ../../blobs/ETAG
 *
 * CACHE is $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub,
 * else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
 *
 * Every name that comes from a server or an archive is checked here before
 * it becomes part of a path: repository ids, revisions, file paths, etags.
 */
#ifndef TF_HUB_H
#define TF_HUB_H

#include <stdint.h>

/* where things are; each returns a malloc'd string */
char *tf_hub_cache_dir(const char *override);   /* override (--cache-dir) wins when set */
char *tf_hub_endpoint(void);                    /* $HF_ENDPOINT without a trailing '/' */
/* $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN or the file $HF_TOKEN_PATH
 * ($HF_HOME/token); *tok is NULL when there is none; -1 if it is unusable */
int tf_hub_token(char **tok);
int tf_hub_offline(void);                       /* HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE */
int tf_hub_env_true(const char *name);          /* "1", "true", "yes", "on" */

/* names: 1 when valid, 0 when not */
int tf_hub_valid_repo(const char *id);          /* org/name, [A-Za-z0-9_.-], no "--" or ".." */
int tf_hub_valid_rev(const char *rev);          /* branch, tag, refs/pr/N or a commit */
int tf_hub_valid_path(const char *path);        /* relative, no "." or ".." parts */
int tf_hub_is_commit(const char *s);            /* 40 lowercase hex */
int tf_hub_valid_etag(const char *s);           /* 40 or 64 lowercase hex */
/* drops a W/ prefix and the quotes, lowercases; -1 if what is left is not
 * a valid etag */
int tf_hub_norm_etag(const char *raw, char out[65]);
/* "org/name@rev" -> repo, rev (rev NULL when absent); -1 + message if bad */
int tf_hub_parse_spec(const char *spec, char **repo, char **rev);

/* CACHE/models--ORG--NAME */
char *tf_hub_repo_dir(const char *cache, const char *repo);
/* models--ORG--NAME -> ORG/NAME, NULL if the folder is not a model repo */
char *tf_hub_repo_from_folder(const char *folder);

/* mkdir -p; 0 or -1 */
int tf_hub_mkdirs(const char *path);
/* creates CACHE and CACHEDIR.TAG when missing */
int tf_hub_cache_init(const char *cache);

/* refs/REV: read returns 1 when found, 0 when absent, -1 on error */
int tf_hub_ref_read(const char *repo_dir, const char *rev, char commit[41]);
int tf_hub_ref_write(const char *repo_dir, const char *rev, const char *commit);

/* snapshots/COMMIT/PATH -> ../../blobs/ETAG (one more ../ per folder in
 * PATH), replacing whatever was there atomically */
int tf_hub_link(const char *repo_dir, const char *commit, const char *path, const char *etag);
/* 1 when snapshots/COMMIT/PATH resolves to a regular file (a complete blob) */
int tf_hub_have_file(const char *repo_dir, const char *commit, const char *path);
/* 1 when blobs/ETAG exists */
int tf_hub_have_blob(const char *repo_dir, const char *etag);

/* takes CACHE/.locks/models--ORG--NAME/NAME.lock exclusively (waits);
 * returns the descriptor to hand to tf_hub_unlock, or -1 */
int tf_hub_lock(const char *cache, const char *repo, const char *name);
void tf_hub_unlock(int fd);

/* which repository files to take: a path is taken when it matches an
 * include pattern and no exclude pattern (fnmatch(3) without flags, so '*'
 * also matches '/'; a pattern ending in '/' means everything below) */
typedef struct {
	const char *const *include;     /* NULL: tf_hub_default_include */
	int ninclude;
	const char *const *exclude;
	int nexclude;
} tf_hub_filter;

extern const char *const tf_hub_default_include[];
int tf_hub_filter_match(const tf_hub_filter *f, const char *path);

/* "12.6M" style size, into buf */
const char *tf_hub_human(uint64_t bytes, char buf[16]);

#endif
