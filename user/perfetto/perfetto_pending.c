// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The spans still open, by span id: the newest copy of each is held until a later batch
// closes it (or the session ends and it is drawn open). Open addressing, at most half full.
#include <errno.h>
#include <stdlib.h>
#include "perfetto/perfetto_internal.h"

static size_t slot(const struct pf_writer *w, uint64_t id)
{
	size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (w->cap - 1);

	while (w->tab[i].span && w->tab[i].id != id)
		i = (i + 1) & (w->cap - 1);
	return i;
}

int pf_pending__put(struct pf_writer *w, uint64_t id, cJSON *span)
{
	size_t i;

	if ((w->n + 1) * 2 > w->cap) {
		struct pending *old = w->tab;
		size_t old_cap = w->cap;

		w->cap = w->cap ? w->cap * 2 : 64;
		w->tab = calloc(w->cap, sizeof(*w->tab));
		if (!w->tab) {
			w->tab = old;
			w->cap = old_cap;
			return -ENOMEM;
		}
		for (size_t k = 0; k < old_cap; k++)
			if (old[k].span)
				w->tab[slot(w, old[k].id)] = old[k];
		free(old);
	}
	i = slot(w, id);
	if (w->tab[i].span)
		cJSON_Delete(w->tab[i].span);
	else
		w->n++;
	w->tab[i] = (struct pending){ id, span };
	return 0;
}

/* Removes id (a closed copy arrived); backward-shift deletion keeps the probe chains. */
void pf_pending__drop(struct pf_writer *w, uint64_t id)
{
	size_t i, j, home;

	if (!w->cap)
		return;
	i = slot(w, id);
	if (!w->tab[i].span)
		return;
	cJSON_Delete(w->tab[i].span);
	w->tab[i].span = NULL;
	w->n--;
	for (j = (i + 1) & (w->cap - 1); w->tab[j].span; j = (j + 1) & (w->cap - 1)) {
		home = (size_t)((w->tab[j].id * 0x9e3779b97f4a7c15ull) >> 17) & (w->cap - 1);
		/* move j back to i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			w->tab[i] = w->tab[j];
			w->tab[j].span = NULL;
			i = j;
		}
	}
}
