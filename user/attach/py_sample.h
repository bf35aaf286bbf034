/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_SAMPLE_H
#define __CIRRON_PY_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

struct observer;
struct target;

/* After each tree input: attaches the probes when a sample is due, detaches them once
 * the sampled step has ended. */
void py_sample__after_event(struct observer *o, struct target *t);
/* Whether a Python call event at wall time ts is used: inside a sample's window. */
bool py_sample__accepts(const struct observer *o, const struct target *t, uint64_t ts_ns);
/* A sample is in progress in some target: the loader then drains events every few ms
 * instead of every 100, so the probes go about a step after they came, not ~100 ms later. */
bool py_sample__active(const struct observer *o);

/* --cuda-calls sampled, called every round of the loop: opens a CUDA window when one is
 * due (one training step in every --sample-every, or every second in processes without
 * torch steps; never sooner than a second after the last) and closes it after one step
 * (at least 20 ms), or after 20 ms. */
void cuda_sample__tick(struct observer *o);
/* A CUDA window is open in some target: the loop then turns every few ms. */
bool cuda_sample__active(const struct observer *o);
/* At the first library load that brings per-call CUDA probes (the process held there, or
 * just attached to): links them and counts every call, the exact head. */
void cuda_sample__head(struct observer *o, struct target *t);
struct cuda_scale {
	uint64_t window_ns, span_ns;		/* time in windows, time since sampling began */
	uint64_t head_ns;			/* the exact head's length */
	uint64_t progress, window_progress;	/* always-linked probes' hits: all, in windows */
	bool by_progress;			/* scaled by progress (else by time) */
	bool exact;				/* the run so far lies in the head: no estimate */
	bool head_only;				/* no window after the head yet: the head scaled */
};
/* The factor from counts in windows to the rest of the span after the exact head: progress
 * after the head / progress in windows, or without progress in windows, that time / window
 * time; head_only: the head's counts to the whole span. Estimates are head + (count - head)
 * x factor, or count x factor when head_only. 1 when exact; 0 before any sample. */
double cuda_sample__scale(const struct observer *o, const struct target *t,
			  struct cuda_scale *s);

#endif
