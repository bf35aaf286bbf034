// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// For readers that sum spans up as they stream (report, trace --ranks): what they drop once
// a span is in their numbers (tree_stream.h), so their memory stays flat.
#include "read/tree_stream.h"

void tstream__drop_summed(struct tstream *t, struct tnode *n)
{
	if (n->parent && !(n->parent->flags & TN_ROOT))
		tstream__drop(t, n);
	else	/* a root's kid goes at the flush */
		while (n->first < n->nkids)
			tstream__drop(t, n->kids[n->first]);
}

void tstream__drop_complete_kids(struct tstream *t, struct tnode *s, bool finishing)
{
	(void)finishing;
	while (s->first < s->nkids && (s->kids[s->first]->flags & TN_COMPLETE))
		tstream__drop(t, s->kids[s->first]);
}
