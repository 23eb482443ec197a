/*
 * wordfreq FILE [TOP]: counts the words of FILE (runs of letters, lower
 * case) in a hash table of malloc'd nodes and strdup'd words, sorts them by
 * count (then word) in an array grown by realloc, prints the TOP (default
 * 10) most frequent and the number of distinct words, and frees everything.
 * Per distinct word: a node and its word; the array doubles from 16
 * entries.  "wordfreq --overflow" writes a byte past a malloc'd block and
 * frees it (for a build with AddressSanitizer, which reports it).  Exits 0,
 * 1 when FILE cannot be read, 2 on a bad argument.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 4096

struct word {
	struct word *next;
	char *text;
	unsigned long count;
};

static struct word *table[BUCKETS];

static unsigned int word_hash(const char *s)
{
	unsigned int h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % BUCKETS;
}

static int word_add(const char *s)
{
	unsigned int h = word_hash(s);
	struct word *w;

	for (w = table[h]; w; w = w->next) {
		if (!strcmp(w->text, s)) {
			w->count++;
			return 0;
		}
	}
	w = malloc(sizeof(*w));
	if (!w || !(w->text = strdup(s)))
		return -1;
	w->count = 1;
	w->next = table[h];
	table[h] = w;
	return 1;
}

static int word_cmp(const void *a, const void *b)
{
	const struct word *x = *(struct word *const *)a, *y = *(struct word *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

static int overflow(void)
{
	char *volatile p = malloc(24);

	if (!p)
		return 1;
	p[24] = 'x';
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	struct word **all = NULL, *w, *next;
	size_t n = 0, cap = 0, len = 0, i;
	char buf[256];
	FILE *f;
	int c, top;

	if (argc == 2 && !strcmp(argv[1], "--overflow"))
		return overflow();
	if (argc < 2 || argc > 3 || (top = argc == 3 ? atoi(argv[2]) : 10) < 0)
		return 2;
	f = fopen(argv[1], "r");
	if (!f)
		return 1;
	do {
		c = fgetc(f);
		if (isalpha(c) && len < sizeof(buf) - 1) {
			buf[len++] = (char)tolower(c);
			continue;
		}
		if (!len)
			continue;
		buf[len] = '\0';
		len = 0;
		if (word_add(buf) < 0)
			return 1;
	} while (c != EOF);
	fclose(f);
	for (i = 0; i < BUCKETS; i++) {
		for (w = table[i]; w; w = w->next) {
			if (n == cap) {
				struct word **grown;

				cap = cap ? 2 * cap : 16;
				grown = realloc(all, cap * sizeof(*all));
				if (!grown)
					return 1;
				all = grown;
			}
			all[n++] = w;
		}
	}
	qsort(all, n, sizeof(*all), word_cmp);
	for (i = 0; i < n && i < (size_t)top; i++)
		printf("%7lu %s\n", all[i]->count, all[i]->text);
	printf("%zu distinct words\n", n);
	for (i = 0; i < BUCKETS; i++) {
		for (w = table[i]; w; w = next) {
			next = w->next;
			free(w->text);
			free(w);
		}
	}
	free(all);
	return 0;
}
