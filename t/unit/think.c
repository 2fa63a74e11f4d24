/* think: a chat reply split into reasoning_content and content
 * (lib/serve/think.h), case by case as vLLM's qwen3 reasoning parser
 * splits them: the tags dropped and the text beside them kept, a block
 * never closed all reasoning, thinking off all content, the model's own
 * <think> dropped once, a tool call closing the block, tags that are
 * not quite tags kept as text. Every case is fed whole, in two pieces
 * cut at every byte, in three cut at every pair of bytes and a byte at a
 * time, and must split the same every way: a tag cut across tokens is
 * found all the same. Then the prompt's end, open or closed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/think.h"
#include "tap.h"

struct tcase {
	const char *name;
	int open;               /* the prompt leaves the block open */
	const char *reply;
	const char *reasoning;  /* what comes out */
	const char *content;
	int closed;             /* the block ends in the reply */
};

static const struct tcase cases[] = {
	{ "the Qwen3.5 shape: newlines beside the tags kept", 1, "Fair.\n</think>\n\nGood morrow.", "Fair.\n",
	  "\n\nGood morrow.", 1 },
	{ "a block never closed is all reasoning", 1, "Fair, and fair again", "Fair, and fair again", "", 0 },
	{ "thinking off: all content, tags and all", 0, "a </think> b <think> c", "", "a </think> b <think> c", 0 },
	{ "the model's own <think> dropped", 1, "<think>abc</think>xyz", "abc", "xyz", 1 },
	{ "an end with nothing after it", 1, "abc</think>", "abc", "", 1 },
	{ "only the first <think> is dropped", 1, "x<think>y<think>z</think>w", "xy<think>z", "w", 1 },
	{ "text after the end is content, a second end included", 1, "abc</think>def</think>ghi", "abc",
	  "def</think>ghi", 1 },
	{ "a tool call ends the block and is content", 1,
	  "I must look.\n\n<tool_call>\n<function=bash>\n<parameter=cmd>\nls\n</parameter>\n</function>\n</tool_call>",
	  "I must look.\n\n", "<tool_call>\n<function=bash>\n<parameter=cmd>\nls\n</parameter>\n</function>\n</tool_call>",
	  1 },
	{ "a tool call with a name attribute", 1, "so <tool_call> <function name=\"x\">", "so ",
	  "<tool_call> <function name=\"x\">", 1 },
	{ "a tool call named, not made, is reasoning", 1, "say <tool_call> in words</think>ok",
	  "say <tool_call> in words", "ok", 1 },
	{ "<functionary> is no function", 1, "<tool_call>\n<functionary> then</think>!", "<tool_call>\n<functionary> then",
	  "!", 1 },
	{ "a tool call cut off before its function is reasoning", 1, "hm <tool_call>\n  ", "hm <tool_call>\n  ", "",
	  0 },
	{ "near misses are text", 1, "a <b> c < d </thin k> <thinker </think>e", "a <b> c < d </thin k> <thinker ", "e",
	  1 },
	{ "a tag cut off at the end is reasoning", 1, "tail </thi", "tail </thi", "", 0 },
	{ "a lone < at the end", 1, "1 <", "1 <", "", 0 },
	{ "UTF-8 beside the tags", 1, "\xc3\xa9<\n</think>\xc3\xbc\xe2\x82\xac", "\xc3\xa9<\n", "\xc3\xbc\xe2\x82\xac",
	  1 },
	{ "an empty reply", 1, "", "", "", 0 },
	{ "an empty reply, thinking off", 0, "", "", "", 0 },
	{ "<<</think>>", 1, "<<</think>>", "<<", ">", 1 },
};

/* the reply fed in the pieces cut at cuts[0..ncut) (increasing) */
static int split(const struct tcase *c, const size_t *cuts, int ncut)
{
	size_t n = strlen(c->reply), from = 0, rn, cn;
	tf_think t;
	tf_sbuf r = { 0 }, ct = { 0 };

	tf_think_init(&t, c->open);
	for (int i = 0; i <= ncut; i++) {
		size_t to = i < ncut ? cuts[i] : n;
		tf_think_push(&t, c->reply + from, to - from);
		from = to;
		/* what came out is taken as it comes, as events take it */
		char *a = tf_think_take(&t.reasoning, &rn), *b = tf_think_take(&t.content, &cn);
		tf_sbuf_add(&r, a, rn);
		tf_sbuf_add(&ct, b, cn);
		free(a);
		free(b);
	}
	tf_think_end(&t);
	tf_sbuf_add(&r, t.reasoning.s ? t.reasoning.s : "", t.reasoning.len);
	tf_sbuf_add(&ct, t.content.s ? t.content.s : "", t.content.len);
	int good = r.len == strlen(c->reasoning) && !memcmp(r.s ? r.s : "", c->reasoning, r.len) &&
		   ct.len == strlen(c->content) && !memcmp(ct.s ? ct.s : "", c->content, ct.len) &&
		   t.closed == c->closed;
	if (!good && !getenv("THINK_QUIET"))
		diag("%s: reasoning '%s' content '%s' closed %d", c->name, r.s ? r.s : "", ct.s ? ct.s : "", t.closed);
	tf_think_free(&t);
	tf_sbuf_free(&r);
	tf_sbuf_free(&ct);
	return good;
}

static void one_case(const struct tcase *c)
{
	size_t n = strlen(c->reply), cuts[4096];
	int bad = 0;

	ok(split(c, NULL, 0), "%s: whole", c->name);
	for (size_t i = 0; i <= n && !bad; i++)
		bad = !split(c, (size_t[]){ i }, 1);
	ok(!bad, "%s: in two pieces, cut at each of %zu places", c->name, n + 1);
	for (size_t i = 0; i <= n && !bad; i++)
		for (size_t j = i; j <= n && !bad; j++)
			bad = !split(c, (size_t[]){ i, j }, 2);
	ok(!bad, "%s: in three pieces, every pair of cuts", c->name);
	for (size_t i = 0; i < n; i++)
		cuts[i] = i + 1;
	ok(split(c, cuts, n ? (int)n - 1 : 0), "%s: a byte at a time", c->name);
}

int main(void)
{
	int ncases = (int)(sizeof cases / sizeof *cases);

	plan(4 * ncases + 6);
	for (int i = 0; i < ncases; i++)
		one_case(&cases[i]);

	static const char on[] = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n";
	static const char off[] = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
	static const char again[] = "</think> and then <think>\n";
	static const char plain[] = "ROMEO:\nI will";
	ok(tf_think_open_in(on, strlen(on)), "thinking on: the prompt leaves the block open");
	ok(!tf_think_open_in(off, strlen(off)), "thinking off: the prompt closes it");
	ok(tf_think_open_in(again, strlen(again)), "a block opened after one closed is open");
	ok(!tf_think_open_in(plain, strlen(plain)), "a prompt without tags leaves none open");
	ok(!tf_think_open_in("<think", 6), "half a tag opens nothing");
	ok(tf_think_open_in("<think>", 7), "a prompt of the tag alone is open");
	return done();
}
