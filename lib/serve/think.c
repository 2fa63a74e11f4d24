/* think.c: a chat reply's thinking and its answer apart (think.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "think.h"

static const char open_tag[] = "<think>", close_tag[] = "</think>";
static const char call_tag[] = "<tool_call>", function_tag[] = "<function";

#define LEN(s) (sizeof(s) - 1)

void tf_think_init(tf_think *t, int open)
{
	memset(t, 0, sizeof *t);
	t->thinking = open;
}

void tf_think_free(tf_think *t)
{
	tf_sbuf_free(&t->hold);
	tf_sbuf_free(&t->reasoning);
	tf_sbuf_free(&t->content);
	memset(t, 0, sizeof *t);
}

char *tf_think_take(tf_sbuf *out, size_t *n)
{
	char *s = out->s ? out->s : tf_strdup("");

	*n = out->len;
	memset(out, 0, sizeof *out);
	return s;
}

/* the blanks Python's str.lstrip() drops that a tool call's lines hold
 * (vLLM strips with it before it looks for "<function") */
static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* s[0..n) against tag: 1 it begins with the tag, 0 it is a proper prefix
 * of it (the next bytes tell), -1 neither */
static int against(const char *s, size_t n, const char *tag, size_t k)
{
	if (n >= k)
		return memcmp(s, tag, k) ? -1 : 1;
	return memcmp(s, tag, n) ? -1 : 0;
}

/* s[0..n), which begins with "<tool_call>": 1 a tool call ("<function"
 * and a blank or "=" after blanks), 0 the next bytes tell, -1 none */
static int tool_call(const char *s, size_t n)
{
	size_t i = LEN(call_tag), k = LEN(function_tag);

	while (i < n && blank(s[i]))
		i++;
	if (n - i <= k)
		return memcmp(s + i, function_tag, n - i) ? -1 : 0;
	if (memcmp(s + i, function_tag, k))
		return -1;
	return blank(s[i + k]) || s[i + k] == '=' ? 1 : -1;
}

/* s[0..n) inside the block: reasoning up to a tag, whatever follows the
 * block's end as content, and a tail that may begin a tag held */
static void scan(tf_think *t, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *lt = memchr(s + i, '<', n - i);
		if (!lt) {
			tf_sbuf_add(&t->reasoning, s + i, n - i);
			return;
		}
		size_t at = (size_t)(lt - s), rn = n - at;
		tf_sbuf_add(&t->reasoning, s + i, at - i);
		int c = against(lt, rn, close_tag, LEN(close_tag));
		int o = t->opened ? -1 : against(lt, rn, open_tag, LEN(open_tag));
		int call = against(lt, rn, call_tag, LEN(call_tag));
		if (c == 1) {
			t->thinking = 0;
			t->closed = 1;
			tf_sbuf_add(&t->content, lt + LEN(close_tag), rn - LEN(close_tag));
			return;
		}
		if (o == 1) {
			t->opened = 1;
			i = at + LEN(open_tag);
			continue;
		}
		if (call == 1) {
			int k = tool_call(lt, rn);
			if (k == 1) {
				/* the call is the answer, its tag and all */
				t->thinking = 0;
				t->closed = 1;
				tf_sbuf_add(&t->content, lt, rn);
				return;
			}
			if (k == 0) {
				tf_sbuf_add(&t->hold, lt, rn);
				return;
			}
			/* a tool call named in the thinking, not made */
			tf_sbuf_add(&t->reasoning, call_tag, LEN(call_tag));
			i = at + LEN(call_tag);
			continue;
		}
		if (c == 0 || o == 0 || call == 0) {
			tf_sbuf_add(&t->hold, lt, rn);
			return;
		}
		tf_sbuf_add(&t->reasoning, "<", 1);
		i = at + 1;
	}
}

void tf_think_push(tf_think *t, const char *s, size_t n)
{
	if (!n)
		return;
	if (!t->thinking) {
		tf_sbuf_add(&t->content, s, n);
		return;
	}
	if (!t->hold.len) {
		scan(t, s, n);
		return;
	}
	/* the held tail and the new bytes, read as one */
	tf_sbuf w = t->hold;
	memset(&t->hold, 0, sizeof t->hold);
	tf_sbuf_add(&w, s, n);
	scan(t, w.s, w.len);
	tf_sbuf_free(&w);
}

void tf_think_end(tf_think *t)
{
	if (t->hold.len)
		tf_sbuf_add(t->thinking ? &t->reasoning : &t->content, t->hold.s, t->hold.len);
	tf_sbuf_free(&t->hold);
}

/* where tag occurs last in s[0..n), or -1 */
static long last(const char *s, size_t n, const char *tag, size_t k)
{
	for (size_t i = n >= k ? n - k + 1 : 0; i-- > 0;)
		if (!memcmp(s + i, tag, k))
			return (long)i;
	return -1;
}

int tf_think_open_in(const char *prompt, size_t n)
{
	long o = last(prompt, n, open_tag, LEN(open_tag)), c = last(prompt, n, close_tag, LEN(close_tag));

	return o >= 0 && o > c;
}
