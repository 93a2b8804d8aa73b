/*
 * fuzz_certificates.c — libFuzzer target over the certificate reader: any
 * bytes as a certificate file must parse or be refused with a reason, never
 * crash; what parses must format back and parse again to the same fields.
 */
#include <stdlib.h>
#include <string.h>

#include "gate/certificate.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tm_cert c, again;
    char why[256];
    if (tm_cert_parse((const char *)data, size, &c, why, sizeof why) != TOPOML_OK) {
        if (why[0] == '\0')
            abort(); /* a refusal always says why */
        return 0;
    }
    static char text[8192];
    int n = tm_cert_format(&c, text, sizeof text);
    if (n < 0)
        abort();
    if (tm_cert_parse(text, (size_t)n, &again, why, sizeof why) != TOPOML_OK)
        abort();
    if (memcmp(&c, &again, sizeof c) != 0)
        abort();
    return 0;
}
