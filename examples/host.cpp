/*
 * host.cpp — the C++ form of host.c, through the header-only wrapper
 * topoml/topoml.hpp (RAII, exceptions). Same output.
 *
 *   host-cpp [BACKEND]
 */
#include <topoml/topoml.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

int main(int argc, char **argv)
{
    try {
        topoml::Context ctx;
        for (const topoml::BackendInfo &b : ctx.backends())
            std::cerr << "backend " << b.name << ": " << (b.enabled() ? "enabled" : "not enabled")
                      << " (" << b.gate_reason << ")\n";

        const double pi = 3.14159265358979323846;
        std::vector<double> xy;
        for (int i = 0; i < 40; i++) {
            xy.push_back(std::cos(2 * pi * i / 40));
            xy.push_back(std::sin(2 * pi * i / 40) * (1 + 0.01 * (i % 3)));
        }
        if (argc > 1)
            ctx.use_backend(argv[1]);
        topoml::Data data = ctx.from_points(xy, 2);
        topoml::RipsOptions opts;
        opts.max_dim = 0;
        topoml::Barcode bc = ctx.barcode(data, opts);
        std::cout << "backend: " << ctx.last_backend() << "\n" << ctx.format(bc);
        return 0;
    } catch (const topoml::Error &e) {
        std::cerr << "host-cpp: " << e.what() << "\n";
        return 1;
    }
}
