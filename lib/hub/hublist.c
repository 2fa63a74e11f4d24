/* hublist.c: walk the cache's repositories, refs and snapshots */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "hub.h"
#include "hublist.h"

typedef struct {
	char **v;
	int n, cap;
} strs;

static void push(strs *s, char *x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = tf_realloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = x;
}

static void strs_free(strs *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *a, const char *b)
{
	char *s = tf_malloc(strlen(a) + strlen(b) + 2);

	sprintf(s, "%s%s%s", a, *a && *b ? "/" : "", b);
	return s;
}

/* names in dir, sorted; a missing dir is empty */
static int names(const char *dir, strs *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : tf_err("cannot read '%s':", dir);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			push(out, tf_strdup(e->d_name));
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp);
	return 0;
}

/* refs below refs/REL as "name\tcommit" strings */
static void walk_refs(const char *repo_dir, const char *rel, strs *refs, int depth)
{
	char *base = join(repo_dir, "refs"), *dir = join(base, rel);
	strs s = { 0 };

	if (depth > 16 || names(dir, &s)) {
		free(base);
		free(dir);
		return;
	}
	for (int i = 0; i < s.n; i++) {
		char *sub = join(rel, s.v[i]), *full = join(base, sub), commit[41];
		struct stat st;

		if (!lstat(full, &st) && S_ISDIR(st.st_mode))
			walk_refs(repo_dir, sub, refs, depth + 1);
		else if (tf_hub_valid_rev(sub) && tf_hub_ref_read(repo_dir, sub, commit) == 1) {
			char *x = tf_malloc(strlen(sub) + 48);

			sprintf(x, "%s\t%s", sub, commit);
			push(refs, x);
		}
		free(sub);
		free(full);
	}
	strs_free(&s);
	free(base);
	free(dir);
}

static void walk_files(const char *dir, int *files, uint64_t *bytes, int depth)
{
	strs s = { 0 };

	if (depth > 64 || names(dir, &s))
		return;
	for (int i = 0; i < s.n; i++) {
		char *full = join(dir, s.v[i]);
		struct stat st;

		if (!lstat(full, &st) && S_ISDIR(st.st_mode))
			walk_files(full, files, bytes, depth + 1);
		else if (!stat(full, &st) && S_ISREG(st.st_mode)) {
			(*files)++;
			*bytes += st.st_size;
		}
		free(full);
	}
	strs_free(&s);
}

static void list_repo(const char *cache, const char *folder, const char *id, FILE *out)
{
	char *repo_dir = join(cache, folder), *snaps = join(repo_dir, "snapshots");
	strs commits = { 0 }, refs = { 0 };

	walk_refs(repo_dir, "", &refs, 0);
	names(snaps, &commits);
	for (int i = 0; i < commits.n; i++) {
		char *dir = join(snaps, commits.v[i]), h[16];
		uint64_t bytes = 0;
		int files = 0, nref = 0;

		if (!tf_hub_is_commit(commits.v[i])) {
			free(dir);
			continue;
		}
		walk_files(dir, &files, &bytes, 0);
		fprintf(out, "%s\t", id);
		for (int j = 0; j < refs.n; j++) {
			char *tab = strchr(refs.v[j], '\t');

			if (!strcmp(tab + 1, commits.v[i]))
				fprintf(out, "%s%.*s", nref++ ? "," : "", (int)(tab - refs.v[j]), refs.v[j]);
		}
		fprintf(out, "%s\t%s\t%d\t%" PRIu64 "\t%s\n", nref ? "" : "-", commits.v[i], files, bytes,
			tf_hub_human(bytes, h));
		free(dir);
	}
	strs_free(&commits);
	strs_free(&refs);
	free(snaps);
	free(repo_dir);
}

int tf_hub_list(const char *cache, const char *repo, FILE *out)
{
	strs repos = { 0 };

	if (repo && !tf_hub_valid_repo(repo))
		return tf_err("invalid repository id '%s' (want ORG/NAME)", repo);
	if (names(cache, &repos))
		return -1;
	for (int i = 0; i < repos.n; i++) {
		char *id = tf_hub_repo_from_folder(repos.v[i]);

		if (id && (!repo || !strcmp(repo, id)))
			list_repo(cache, repos.v[i], id, out);
		free(id);
	}
	strs_free(&repos);
	return 0;
}
