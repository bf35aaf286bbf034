// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// report's line charts (report_chart.h): inline SVG, nothing fetched.
#include "report/report_chart.h"

#define CHART_W 900
#define CHART_H 200
#define PAD_L 70
#define PAD_B 24

void report__html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

void report__chart(FILE *f, const char *id, const char *title, const char *unit, double scale,
		   const struct chart_line *lines, size_t nlines, const char *x_what)
{
	double pts[REPORT_MAX_POINTS], max = 0;
	size_t m = 0, n = nlines ? (size_t)lines[0].d->count : 0;

	for (size_t l = 0; l < nlines; l++)
		if (lines[l].d->count && lines[l].d->max * scale > max)
			max = lines[l].d->max * scale;
	if (max <= 0)
		max = 1;
	fprintf(f, "<h3>");
	report__html(f, title);
	fprintf(f, "</h3>\n<svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" "
		"height=\"%d\" role=\"img\">\n", id, CHART_W, CHART_H, CHART_W, CHART_H);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>"
		"<line x1=\"%d\" y1=\"4\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", PAD_L,
		CHART_H - PAD_B, CHART_W - 4, CHART_H - PAD_B, PAD_L, PAD_L, CHART_H - PAD_B);
	fprintf(f, "<text x=\"%d\" y=\"14\" class=\"lbl\" text-anchor=\"end\">%.4g %s</text>"
		"<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">0</text>\n", PAD_L - 4,
		max, unit, PAD_L - 4, CHART_H - PAD_B);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lbl\">%s 0</text><text x=\"%d\" y=\"%d\" "
		"class=\"lbl\" text-anchor=\"end\">%s %zu</text>\n", PAD_L, CHART_H - 6, x_what,
		CHART_W - 4, CHART_H - 6, x_what, n ? n - 1 : 0);
	for (size_t l = 0; l < nlines; l++) {
		m = downsample__points(lines[l].d, REPORT_MAX_POINTS, pts);
		fprintf(f, "<polyline class=\"series\" data-name=\"%s\" data-points=\"%zu\" "
			"stroke=\"%s\" points=\"", lines[l].name, m, lines[l].color);
		for (size_t i = 0; i < m; i++) {
			double x = PAD_L + (m > 1 ? (double)i * (CHART_W - 4 - PAD_L) / (double)(m - 1)
					    : 0);
			double y = (CHART_H - PAD_B) - pts[i] * scale / max * (CHART_H - PAD_B - 8);

			fprintf(f, "%s%.1f,%.1f", i ? " " : "", x, y);
		}
		fputs("\"/>\n", f);
	}
	fputs("</svg>\n<p class=\"legend\">", f);
	for (size_t l = 0; l < nlines; l++) {
		fprintf(f, "<span style=\"color:%s\">&#9632; ", lines[l].color);
		report__html(f, lines[l].name);
		fputs("</span> ", f);
	}
	if (n > REPORT_MAX_POINTS)
		fprintf(f, "<span class=\"note\">%zu %ss drawn as %zu points, each the mean of "
			"%.1f consecutive ones</span>", n, x_what, m, (double)n / (double)m);
	else
		fprintf(f, "<span class=\"note\">%zu %ss, each drawn</span>", n, x_what);
	fputs("</p>\n", f);
}
