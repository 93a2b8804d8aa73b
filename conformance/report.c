/*
 * report.c — the results of a run for people (a table), for programs (JSON)
 * and for CI systems (JUnit XML). All three say the same things: per plugin
 * its identity, file hash, probe result and verdict; per case its result,
 * time, error against bound, and a line of detail.
 *
 * JUnit has no notion of NOT_SUPPORTED or QUALITY_WARNING: they are written
 * as <skipped/> and as a passing test case with the warning in
 * <system-out>; FAIL is a <failure/>, CRASH and TIMEOUT are <error/>.
 */
#include <math.h>
#include <string.h>

#include "conformance.h"

tc_result tc_plugin_verdict(const tc_run *run, const tc_plugin *p, size_t counts[TC_RESULT_COUNT])
{
    (void)run;
    tc_result worst = TC_PASS;
    for (int r = 0; r < TC_RESULT_COUNT; r++)
        counts[r] = 0;
    for (size_t k = 0; k < p->n_run; k++) {
        tc_result r = p->verdicts[k].result;
        counts[r]++;
        if (r > worst)
            worst = r;
    }
    return worst;
}

void tc_summary(const size_t counts[TC_RESULT_COUNT], char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int r = 0; r < TC_RESULT_COUNT; r++) {
        if (!counts[r] || used >= size)
            continue;
        int w = snprintf(out + used, size - used, "%s%zu %s", used ? ", " : "", counts[r],
                         tc_result_name((tc_result)r));
        if (w > 0)
            used += (size_t)w;
    }
    if (!out[0])
        snprintf(out, size, "no cases");
}

static const char *verdict_word(const tc_run *run, const tc_plugin *p)
{
    size_t counts[TC_RESULT_COUNT];
    tc_result w = tc_plugin_verdict(run, p, counts);
    if (!p->loaded)
        return "fail";
    if (p->probe_status != TOPOML_OK)
        return "not supported (hardware absent)";
    return tc_result_ok(w) ? "pass" : "fail";
}

void tc_report_table(const tc_run *run, FILE *f)
{
    fprintf(f, "topoml-conformance %s, ABI v%u, suite %s, tier %s, %zu cases\n", topoml_version(),
            TOPOML_ABI_VERSION, run->suite->version, tc_tier_name(run->tier), run->n_cases);
    fprintf(f, "machine: %s\n", run->cpu_model);
    if (run->n_generated)
        fprintf(f, "%zu of the cases generated from the capability records, seed %llu\n",
                run->n_generated, (unsigned long long)run->seed);
    for (size_t i = 0; i < run->n_plugins; i++) {
        const tc_plugin *p = &run->plugins[i];
        fprintf(f, "\n== %s %s (%s) — %s\n", p->name, p->version, p->vendor, p->path);
        if (p->loaded) {
            fprintf(f, "   ABI v%u, sha256 %.16s..., probe: %s%s%s\n", p->abi_version,
                    p->file_sha256, p->probe_status == TOPOML_OK ? "ok" : "failed",
                    p->probe_message[0] ? " — " : "", p->probe_message);
        } else {
            fprintf(f, "   could not be loaded: %s — %s\n", tc_result_name(p->load.result),
                    p->load.detail);
        }
        for (size_t k = 0; k < p->n_run; k++) {
            const tc_verdict *v = &p->verdicts[k];
            fprintf(f, "   %-15s %-52s %7.3fs  %s\n", tc_result_name(v->result),
                    run->cases[k]->name, v->seconds, v->detail);
        }
        size_t counts[TC_RESULT_COUNT];
        char summary[256];
        tc_plugin_verdict(run, p, counts);
        tc_summary(counts, summary, sizeof summary);
        if (p->n_run < run->n_cases)
            fprintf(f, "   (%zu of %zu cases run: stopped at the first failure)\n", p->n_run,
                    run->n_cases);
        fprintf(f, "   verdict: %s (%s)%s%s\n", verdict_word(run, p), summary,
                run->certificates && run->certificates[i] ? "; certificate " : "",
                run->certificates && run->certificates[i] ? run->certificates[i] : "");
    }
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

/* JSON has no infinity or NaN: those become null. */
static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

static const char *op_name(uint32_t op)
{
    static const char *names[] = {"distances", "edges", "h0", "rips", "image"};
    return op < 5 ? names[op] : op == TOPOML_OP_COUNT ? "all" : "?";
}

bool tc_report_json(const tc_run *run, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f)
        return false;
    fprintf(f, "{\"tool\":\"topoml-conformance\",\"core_version\":");
    json_str(f, topoml_version());
    fprintf(f, ",\"abi_version\":%u,\"suite_version\":", TOPOML_ABI_VERSION);
    json_str(f, run->suite->version);
    fprintf(f, ",\"tier\":\"%s\",\"seed\":%llu,\"generated_cases\":%zu,\"date\":",
            tc_tier_name(run->tier), (unsigned long long)run->seed, run->n_generated);
    json_str(f, run->date);
    fprintf(f, ",\"machine\":{\"cpu_model\":");
    json_str(f, run->cpu_model);
    fprintf(f, ",\"cpu_sha256\":");
    json_str(f, run->cpu_sha256);
    fprintf(f, "},\"plugins\":[");
    for (size_t i = 0; i < run->n_plugins; i++) {
        const tc_plugin *p = &run->plugins[i];
        size_t counts[TC_RESULT_COUNT];
        tc_plugin_verdict(run, p, counts);
        fprintf(f, "%s\n{\"path\":", i ? "," : "");
        json_str(f, p->path);
        fprintf(f, ",\"file_sha256\":");
        json_str(f, p->file_sha256);
        fprintf(f, ",\"loaded\":%s,\"name\":", p->loaded ? "true" : "false");
        json_str(f, p->name);
        fprintf(f, ",\"version\":");
        json_str(f, p->version);
        fprintf(f, ",\"vendor\":");
        json_str(f, p->vendor);
        fprintf(f, ",\"abi_version\":%u,\"load_error\":", p->abi_version);
        if (p->loaded)
            fputs("null", f);
        else
            json_str(f, p->load.detail);
        fprintf(f, ",\"probe\":{\"ok\":%s,\"message\":",
                p->loaded && p->probe_status == TOPOML_OK ? "true" : "false");
        json_str(f, p->probe_message);
        fprintf(f, "},\"devices\":[");
        for (uint32_t k = 0; k < p->n_caps; k++) {
            fputs(k ? "," : "", f);
            json_str(f, p->devices[k]);
        }
        fprintf(f, "],\"cases_run\":%zu,\"verdict\":", p->n_run);
        json_str(f, verdict_word(run, p));
        fprintf(f, ",\"counts\":{");
        for (int r = 0; r < TC_RESULT_COUNT; r++)
            fprintf(f, "%s\"%s\":%zu", r ? "," : "", tc_result_name((tc_result)r), counts[r]);
        fprintf(f, "},\"certificate\":");
        if (run->certificates && run->certificates[i])
            json_str(f, run->certificates[i]);
        else
            fputs("null", f);
        fprintf(f, ",\"cases\":[");
        for (size_t k = 0; k < p->n_run; k++) {
            const tc_case *c = run->cases[k];
            const tc_verdict *v = &p->verdicts[k];
            fprintf(f, "%s\n {\"name\":", k ? "," : "");
            json_str(f, c->name);
            fprintf(f,
                    ",\"op\":\"%s\",\"tier\":\"%s\",\"result\":\"%s\",\"seconds\":", op_name(c->op),
                    tc_tier_name(c->tier), tc_result_name(v->result));
            json_num(f, v->seconds);
            fprintf(f, ",\"error\":");
            json_num(f, v->error);
            fprintf(f, ",\"bound\":");
            json_num(f, v->bound);
            fprintf(f, ",\"detail\":");
            json_str(f, v->detail);
            fputc('}', f);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    bool ok = !ferror(f);
    if (f != stdout)
        ok = fclose(f) == 0 && ok;
    else
        fflush(f);
    return ok;
}

/* ---- JUnit XML ---- */

static void xml_str(FILE *f, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        switch (*c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            /* XML 1.0 allows no control characters but tab and newlines. */
            if (*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r')
                fputc(' ', f);
            else
                fputc(*c, f);
        }
    }
}

bool tc_report_junit(const tc_run *run, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f)
        return false;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"topoml-conformance "
               "suite ");
    xml_str(f, run->suite->version);
    fprintf(f, " tier %s\">\n", tc_tier_name(run->tier));
    for (size_t i = 0; i < run->n_plugins; i++) {
        const tc_plugin *p = &run->plugins[i];
        size_t counts[TC_RESULT_COUNT];
        tc_plugin_verdict(run, p, counts);
        double total = 0;
        for (size_t k = 0; k < p->n_run; k++)
            total += p->verdicts[k].seconds;
        fprintf(f, "  <testsuite name=\"");
        xml_str(f, p->name);
        fprintf(f,
                "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
                "time=\"%.3f\">\n",
                p->n_run, counts[TC_FAIL], counts[TC_CRASH] + counts[TC_TIMEOUT],
                counts[TC_NOT_SUPPORTED], total);
        fprintf(f, "    <properties>\n      <property name=\"path\" value=\"");
        xml_str(f, p->path);
        fprintf(f, "\"/>\n      <property name=\"file_sha256\" value=\"%s\"/>\n", p->file_sha256);
        fprintf(f, "      <property name=\"verdict\" value=\"");
        xml_str(f, verdict_word(run, p));
        fprintf(f, "\"/>\n    </properties>\n");
        for (size_t k = 0; k < p->n_run; k++) {
            const tc_case *c = run->cases[k];
            const tc_verdict *v = &p->verdicts[k];
            fprintf(f, "    <testcase classname=\"");
            xml_str(f, p->name);
            fprintf(f, ".%s\" name=\"", op_name(c->op));
            xml_str(f, c->name);
            fprintf(f, "\" time=\"%.3f\"", v->seconds);
            const char *tag = v->result == TC_FAIL                               ? "failure"
                              : v->result == TC_CRASH || v->result == TC_TIMEOUT ? "error"
                              : v->result == TC_NOT_SUPPORTED                    ? "skipped"
                                                                                 : NULL;
            if (tag) {
                fprintf(f, ">\n      <%s type=\"%s\" message=\"", tag, tc_result_name(v->result));
                xml_str(f, v->detail);
                fprintf(f, "\"/>\n    </testcase>\n");
            } else if (v->result == TC_QUALITY_WARNING) {
                fprintf(f, ">\n      <system-out>QUALITY_WARNING: ");
                xml_str(f, v->detail);
                fprintf(f, "</system-out>\n    </testcase>\n");
            } else {
                fprintf(f, "/>\n");
            }
        }
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    bool ok = !ferror(f);
    if (f != stdout)
        ok = fclose(f) == 0 && ok;
    else
        fflush(f);
    return ok;
}
