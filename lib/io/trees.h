/*
 * trees.h: reading prompts and token trees, as text or as tf-records(5).
 *
 * Text: one item per line. A line of ids (as ids.h reads them) is a prompt
 * and starts a sequence; a blank line is an empty prompt. A line of
 * ID:PARENT words is a tree on the sequence so far: node i is the i-th
 * word, PARENT a node index of the same line or -1 for the end of the
 * context. '#' starts a comment. Records: an ids record is a prompt, a tree
 * record (rows 2: the ids, then the parents; cols the nodes) a tree.
 *
 * Each item is checked as it is read: ids in [0, vocab), a tree's shape as
 * tf_tree_shape_of takes it, no tree before the first prompt; the message
 * names the line or record.
 */
#ifndef TF_TREES_H
#define TF_TREES_H

#include <stdint.h>
#include <stdio.h>

#include "ids.h"

enum { TF_ITEM_PROMPT = 1, TF_ITEM_TREE = 2 };

typedef struct {
	int kind;               /* TF_ITEM_* */
	tf_seq id;              /* the prompt's ids, or the tree's */
	tf_seq parent;          /* a tree's parents */
	long where;             /* line (text) or record (binary) it came from, from 1 */
} tf_item;

typedef struct {
	FILE *f;
	const char *name;
	int binary;             /* -1 until the first byte was seen */
	long where;             /* lines or records read */
	int prompts;            /* a prompt was read */
	char *buf;
	size_t cap;
} tf_items_reader;

void tf_items_open(tf_items_reader *r, FILE *f, const char *name);
/* the next item into it; 1 when read, 0 at end of input, -1 on error */
int tf_items_next(tf_items_reader *r, tf_item *it, long vocab);
void tf_items_close(tf_items_reader *r);
void tf_item_free(tf_item *it);

#endif
