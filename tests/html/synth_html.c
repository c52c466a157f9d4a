/*
 * synth_html.c - writes the HTML report of a synthetic calling-context tree
 * of N nodes (default 1,000,000) built directly as an an_view, for the
 * large-profile test of `stint html` (tests/html/run_html.js, test
 * "large").  Usage: html_synth OUT.html [NODES]; prints one JSON line with
 * the pruning statistics and the time out_html() took.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../analysis/an_view.h"
#include "../../output/out_html.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: html_synth OUT.html [NODES]\n");
		return 2;
	}
	uint32_t nn = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1000000u;
	enum { NFUNCS = 4000, NMODS = 4 };
	static char names[NFUNCS][32];
	struct an_func *funcs = calloc(NFUNCS, sizeof(*funcs));
	struct an_module mods[NMODS];
	static char mpath[NMODS][32];
	for (int m = 0; m < NMODS; m++) {
		snprintf(mpath[m], sizeof(mpath[m]), "/opt/synth/libmod%d.so", m);
		mods[m].path = mpath[m];
		mods[m].base = strrchr(mpath[m], '/') + 1;
	}
	for (int i = 0; i < NFUNCS; i++) {
		snprintf(names[i], sizeof(names[i]), "synth_fn_%04d", i);
		funcs[i].name = names[i];
		funcs[i].module = (uint32_t)(i % NMODS);
		funcs[i].file = "synth.c";
		funcs[i].line = (uint32_t)(10 + i);
	}
	struct an_result r;
	memset(&r, 0, sizeof(r));
	r.funcs = funcs;
	r.nfuncs = NFUNCS;
	r.mods = mods;
	r.nmods = NMODS;

	/* the tree: parents precede children; a few hot spines, a long tail */
	struct an_view v;
	memset(&v, 0, sizeof(v));
	v.r = &r;
	v.len = v.cap = nn + 1;
	v.n = calloc(v.len, sizeof(*v.n));
	if (!funcs || !v.n)
		return 1;
	v.n[0].fn = ~0u;
	v.n[0].parent = ~0u;
	for (uint32_t i = 1; i < v.len; i++) {
		struct cct_node *n = &v.n[i];
		uint32_t lo = (i - 1) / 6, hi = (i - 1) / 2;
		n->parent = i == 1 ? 0 : lo + rnd() % (hi - lo + 1);
		n->fn = i < 8 ? i : rnd() % NFUNCS;
		n->calls = 1 + rnd() % 5;
		double x = (double)(rnd() % 1000);
		n->v[AN_EE] = x * x * x / 1e4 + 100;
		n->v[AN_AE] = (double)(uint64_t)(n->v[AN_EE] * 0.75);
		n->v[AN_EE] = (double)(uint64_t)n->v[AN_EE];
	}
	for (uint32_t i = v.len; i-- > 1;) {
		struct cct_node *n = &v.n[i], *p = &v.n[n->parent];
		n->v[AN_EI] += n->v[AN_EE];
		n->v[AN_AI] += n->v[AN_AE];
		for (int k = 0; k < AN_NVALUES; k++) {
			n->vmin[k] = n->v[k] / (double)n->calls;
			n->vmax[k] = n->v[k] / (double)n->calls;
		}
		if (n->parent) {
			p->v[AN_EI] += n->v[AN_EI];
			p->v[AN_AI] += n->v[AN_AI];
		} else {
			v.total[AN_EI] += n->v[AN_EI];
			v.total[AN_AI] += n->v[AN_AI];
		}
		n->next = p->child;
		p->child = i;
	}
	v.total[AN_EE] = v.total[AN_EI];
	v.total[AN_AE] = v.total[AN_AI];

	an_view_functions(&v, &r.functions, &r.nfunctions);
	an_view_modules(&v, &r.modules, &r.nmodules);
	struct an_row thr = {.name = "synth", .module = "", .pid = 1, .tid = 1};
	memcpy(thr.v, v.total, sizeof(thr.v));
	struct an_row proc = thr;
	proc.name = "synthetic";
	proc.extra = "synthetic";
	r.thread_rows = &thr;
	r.nthread_rows = 1;
	r.processes = &proc;
	r.nprocesses = 1;
	r.session = thr;
	r.session.name = "session";

	struct fmt_data d;
	memset(&d, 0, sizeof(d));
	d.method = "instrumentation";
	d.command = "synthetic calling-context tree";
	d.duration_ns = (uint64_t)v.total[AN_EI];
	d.os = "synthetic";
	d.clock = "synthetic";
	d.nprocs = d.nthreads = 1;

	struct out_html_opts o = {.min_share = OUT_HTML_MIN_SHARE,
				  .max_nodes = OUT_HTML_MAX_NODES,
				  .max_edges = OUT_HTML_MAX_EDGES};
	struct out_html_stats st;
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = out_html(f, &d, &r, &v, &o, &st);
	if (fclose(f) != 0)
		rc = -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc < 0) {
		perror("out_html");
		return 1;
	}
	printf("{\"source_nodes\":%u,\"shown_nodes\":%u,\"other_nodes\":%u,\"folded_nodes\":%u,"
	       "\"threshold\":%.17g,\"edges\":%u,\"dropped_edges\":%u,\"functions\":%u,\"total_ei\":%.0f,"
	       "\"write_s\":%.3f}\n",
	       st.source_nodes, st.shown_nodes, st.other_nodes, st.folded_nodes, st.threshold, st.edges,
	       st.dropped_edges, r.nfunctions, v.total[AN_EI],
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(r.functions);
	free(r.modules);
	free(v.n);
	free(funcs);
	return 0;
}
