/*
 * features.cpp — distances and the features of diagrams (topoml/features.h):
 * Context.distances, pairs_finite, betti_curve, landscapes, entropy,
 * total_persistence, bottleneck, wasserstein and persistence_images.
 */
#include "binding.h"

namespace topoml_py {

/* Pairwise distances of a point cloud, condensed in Ripser's order. */
nb::ndarray<nb::numpy, double> Context::distances(Points points, uint32_t metric)
{
    Guard g(this);
    topoml_data *data = make_data(points, std::nullopt, std::nullopt, std::nullopt,
                                  std::nullopt, points.shape(0));
    void *out = nullptr;
    uint64_t count = 0;
    int st;
    {
        nb::gil_scoped_release rel;
        st = topoml_distances(ctx_, data, (topoml_metric)metric, TOPOML_F64, &out, &count);
    }
    topoml_data_free(ctx_, data);
    if (!emit_warnings()) {
        topoml_free(ctx_, out);
        throw nb::python_error();
    }
    check(st);
    double *copy = new double[count ? count : 1];
    std::memcpy(copy, out, count * sizeof(double));
    topoml_free(ctx_, out);
    return owned_array(copy, {(size_t)count});
}

/* ---- features of one diagram (topoml/features.h) ---- */
nb::ndarray<nb::numpy, double> Context::pairs_finite(Pairs pairs, uint32_t mode, double clip)
{
    Guard g(this);
    size_t n = pairs.shape(0);
    double *out = new double[2 * n + 2];
    uint64_t kept = 0;
    int st = topoml_pairs_finite(ctx_, as_pairs(pairs), n, mode, clip,
                                 reinterpret_cast<topoml_pair *>(out), &kept);
    if (st != TOPOML_OK) {
        delete[] out;
        raise_status(st);
    }
    return owned_array(out, {(size_t)kept, 2});
}

nb::ndarray<nb::numpy, double> Context::betti_curve(Pairs pairs, Vector grid)
{
    Guard g(this);
    size_t m = grid.shape(0);
    std::vector<uint64_t> counts(m);
    check(topoml_betti_curve(ctx_, as_pairs(pairs), pairs.shape(0), grid.data(), m,
                             counts.data()));
    double *out = new double[m ? m : 1];
    for (size_t i = 0; i < m; i++)
        out[i] = (double)counts[i];
    return owned_array(out, {m});
}

nb::ndarray<nb::numpy, double> Context::landscapes(Pairs pairs, uint32_t levels, Vector grid)
{
    Guard g(this);
    size_t m = grid.shape(0);
    double *out = new double[(size_t)levels * m + 1];
    int st;
    {
        nb::gil_scoped_release rel;
        st = topoml_landscapes(ctx_, as_pairs(pairs), pairs.shape(0), levels, grid.data(), m,
                               out);
    }
    if (st != TOPOML_OK) {
        delete[] out;
        raise_status(st);
    }
    return owned_array(out, {(size_t)levels, m});
}

double Context::entropy(Pairs pairs)
{
    Guard g(this);
    double e = 0;
    check(topoml_persistent_entropy(ctx_, as_pairs(pairs), pairs.shape(0), &e));
    return e;
}

double Context::total_persistence(Pairs pairs, double q)
{
    Guard g(this);
    double s = 0;
    check(topoml_total_persistence(ctx_, as_pairs(pairs), pairs.shape(0), q, &s));
    return s;
}

double Context::bottleneck(Pairs a, Pairs b)
{
    Guard g(this);
    double d = 0;
    int st;
    {
        nb::gil_scoped_release rel;
        st = topoml_bottleneck_distance(ctx_, as_pairs(a), a.shape(0), as_pairs(b),
                                        b.shape(0), &d);
    }
    check(st);
    return d;
}

double Context::wasserstein(Pairs a, Pairs b, double order, double internal_p)
{
    Guard g(this);
    double d = 0;
    int st;
    {
        nb::gil_scoped_release rel;
        st = topoml_wasserstein_distance(ctx_, as_pairs(a), a.shape(0), as_pairs(b),
                                         b.shape(0), order, internal_p, &d);
    }
    check(st);
    return d;
}

/* Persistence images of several diagrams at once: diagram k is
 * pairs[offsets[k]:offsets[k+1]]; returns (n_diagrams, height, width). */
nb::ndarray<nb::numpy, double>
Context::persistence_images(Pairs pairs, Offsets offsets, uint32_t weight, double weight_max,
                            double weight_power, double sigma, double birth_min, double birth_max,
                            double pers_min, double pers_max, uint32_t width, uint32_t height,
                            uint32_t infinite, double clip_death, nb::object progress,
                            bool check_signals)
{
    Guard g(this);
    if (offsets.shape(0) < 1)
        throw nb::value_error("persistence images: offsets needs at least one entry");
    size_t nd = offsets.shape(0) - 1;
    if (nd > 0 && offsets.data()[nd] > pairs.shape(0))
        throw nb::value_error("persistence images: offsets run past the pairs");
    topoml_image_params_v1 p;
    topoml_image_params_init(&p);
    p.weight = weight;
    p.weight_max = weight_max;
    p.weight_power = weight_power;
    p.sigma = sigma;
    p.birth_min = birth_min;
    p.birth_max = birth_max;
    p.pers_min = pers_min;
    p.pers_max = pers_max;
    p.width = width;
    p.height = height;
    p.infinite = infinite;
    p.clip_death = clip_death;
    size_t cells = nd * (size_t)width * (size_t)height;
    if (width != 0 && height != 0 && cells / width / height != nd)
        throw nb::value_error("persistence images: too many pixels");
    double *out = new double[cells ? cells : 1];
    Progress pr(progress, check_signals);
    topoml_set_progress(ctx_, &Progress::callback, &pr);
    int st;
    {
        nb::gil_scoped_release rel;
        st = topoml_persistence_images(ctx_, &p, nd, offsets.data(), as_pairs(pairs), out);
    }
    topoml_set_progress(ctx_, nullptr, nullptr);
    if (!emit_warnings()) {
        delete[] out;
        throw nb::python_error();
    }
    if (st != TOPOML_OK) {
        delete[] out;
        if (st == TOPOML_E_CANCELLED)
            pr.raise();
        raise_status(st);
    }
    return owned_array(out, {nd, (size_t)height, (size_t)width});
}

void register_features(nb::class_<Context> &context)
{
    context
        .def("distances", &Context::distances, "points"_a, "metric"_a)
        .def("pairs_finite", &Context::pairs_finite, "pairs"_a, "mode"_a, "clip"_a)
        .def("betti_curve", &Context::betti_curve, "pairs"_a, "grid"_a)
        .def("landscapes", &Context::landscapes, "pairs"_a, "levels"_a, "grid"_a)
        .def("entropy", &Context::entropy, "pairs"_a)
        .def("total_persistence", &Context::total_persistence, "pairs"_a, "q"_a)
        .def("bottleneck", &Context::bottleneck, "a"_a, "b"_a)
        .def("wasserstein", &Context::wasserstein, "a"_a, "b"_a, "order"_a, "internal_p"_a)
        .def("persistence_images", &Context::persistence_images, "pairs"_a, "offsets"_a,
             "weight"_a, "weight_max"_a, "weight_power"_a, "sigma"_a, "birth_min"_a,
             "birth_max"_a, "pers_min"_a, "pers_max"_a, "width"_a, "height"_a, "infinite"_a,
             "clip_death"_a, "progress"_a.none(), "check_signals"_a);
}

} // namespace topoml_py
