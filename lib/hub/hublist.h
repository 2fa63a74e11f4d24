/*
 * hublist.h: what the hub cache holds.
 *
 * One line per snapshot, fields separated by a tab:
 *
 *   REPO  REFS  COMMIT  FILES  BYTES  SIZE
 *
 * REFS are the refs pointing at the commit, comma-separated, or "-"; FILES
 * and BYTES count the snapshot's complete files; SIZE is BYTES for people
 * ("12.6M"). Repositories and commits come in name order.
 */
#ifndef TF_HUBLIST_H
#define TF_HUBLIST_H

#include <stdio.h>

/* repo NULL lists every model repository of the cache */
int tf_hub_list(const char *cache, const char *repo, FILE *out);

#endif
