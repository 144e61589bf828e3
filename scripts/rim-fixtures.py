# A port of Quantipy's / weightipy's RIM weighting, for comparing the engine's raking with it.
# Port of the `Rake` class (start(), rakeonvar()) and of what `Rim` does around it, as read in
#   weightipy/internal/rim.py, kaitumisuuringute-keskus/Weightipy at commit
#   77b252aeb083afeda35d8442c8536d9c2df52e0d (derived from quantipy/core/weights/rim.py).
# Same loop, same convergence test, same defaults; rewritten here, not copied. Quantipy's own
# quantipy/core/weights/rim.py (Quantipy/quantipy at commit
# 42b5a2738165d8f66a30796d553946357116c68b, Python 2) has the same Rake loop, test, cap and
# defaults; there the codes of a variable come in Python 2 dict order, which matters only
# before convergence.
#
# Run from the repository root with a Python that has numpy and pandas
# (Debian: apt-get install -y python3-numpy python3-pandas; then /usr/bin/python3 scripts/rim-fixtures.py).
# Writes test/fixtures/rim/<case>.json: the targets (in the engine's targets format), RIM's
# options, iterations and last change, and RIM's weight per cell of the target variables (the
# script stops if it is not constant within a cell, which it is: RIM starts every respondent at 1).
#
# Upstream, as ported:
# - Seed weights are 1 for every respondent (RIM has no base weight).
# - Targets are percentages summing to 100; each becomes pct / 100 * n (n: respondents of the
#   group), so the weights sum to n (mean 1). A target of 0 is taken as 1e-8; a code with no
#   respondents is skipped. Rows with a missing target variable are dropped before raking (and
#   get weight 1 afterwards); here a blank is coded as the category "NA", as the engine does.
# - One iteration: for every variable in the order given, for every code in the order given,
#   weights[code] *= target / sum(weights[code]). Then, with a cap, clamp to [min, max]
#   (max + 0.0001, min - 0.0001: the "anesrake cap correction") and divide by the mean, repeated
#   while any weight is out of range.
# - Convergence: diff = sum |weights - weights before the iteration|; before each iteration,
#   stop unless diff < (1 - convcrit) * previous diff. Defaults: max_iterations 1000,
#   convcrit 0.01 (Rim does not pass its convcrit on to Rake: the default always applies).
#   The counter reported is the iteration at which it stopped (one more than the passes run).
# - Weights of exactly 0 become 1. With Rim(total=T) the weights are then scaled to sum to T
#   (not ported, nor are groups, group_targets and filters: the fixtures use none of them).
import gzip
import json
import os

import numpy as np
import pandas as pd

UPSTREAM = {"repository": "kaitumisuuringute-keskus/Weightipy", "file": "weightipy/internal/rim.py",
            "commit": "77b252aeb083afeda35d8442c8536d9c2df52e0d"}


def rim_rake(codes, targets, max_iterations=1000, convcrit=0.01, cap=0, anesrake_cap_correction=True):
    """codes: {variable: array of codes}; targets: [(variable, {code: percent})] in raking order."""
    n = len(next(iter(codes.values())))
    absolute = [(v, {code: pct / 100 * n for code, pct in t.items()}) for v, t in targets]
    index = {(v, code): np.where(codes[v] == code)[0] for v, t in absolute for code in t}
    use_cap = isinstance(cap, (list, tuple)) or cap > 0
    min_cap, max_cap = (cap[0], cap[1]) if isinstance(cap, (list, tuple)) else (None, cap)
    if anesrake_cap_correction:
        max_cap += 0.0001
        if min_cap is not None:
            min_cap -= 0.0001
    weights = np.ones(n)
    pct_still = 1 - convcrit
    diff_error, diff_error_old = 999999, 99999999999
    for iteration in range(1, max_iterations + 1):
        before = weights.copy()
        if not diff_error < pct_still * diff_error_old:
            break
        for v, t in absolute:
            for code, target in t.items():
                rows = index[(v, code)]
                if rows.shape[0] == 0:
                    continue
                weights[rows] *= (target if target != 0 else 0.00000001) / weights[rows].sum()
        if use_cap:
            while (min_cap is not None and weights.min() < min_cap) or weights.max() > max_cap:
                if min_cap is not None:
                    weights[weights < min_cap] = min_cap
                weights[weights > max_cap] = max_cap
                weights = weights / np.mean(weights)
        diff_error_old = diff_error
        diff_error = np.sum(np.abs(weights - before))
    weights[weights == 0.0] = 1.0
    return weights, iteration, float(diff_error)


def read(file, variables):
    with gzip.open(os.path.join("datasets", file), "rt") as f:
        frame = pd.read_csv(f, usecols=variables)
    # The engine's value text, "NA" for a blank (numeric codes are whole numbers in these files).
    return {v: np.array(["NA" if pd.isna(x) else str(int(x)) for x in frame[v]], dtype=object) for v in variables}


def run_case(name, file, dataset, margins, **options):
    variables = [m["variable"] for m in margins]
    codes = read(file, variables)
    percents = [(m["variable"], {code: p * 100 for code, p in m["proportions"].items()}) for m in margins]
    weights, iterations, diff = rim_rake(codes, percents, **options)
    keys = ["\r".join(codes[v][i] for v in variables) for i in range(len(weights))]
    cells = {}
    for key, w in zip(keys, weights):
        cells.setdefault(key, []).append(w)
    out = []
    for key, ws in cells.items():
        ws = np.array(ws)
        if (ws.max() - ws.min()) / ws.mean() > 1e-12:
            raise SystemExit(f"{name}: RIM's weight is not constant within a cell")
        out.append({"values": dict(zip(variables, key.split("\r"))), "weight": float(ws[0]), "respondents": len(ws)})
    fixture = {"case": name, "csv": os.path.join("datasets", file), "dataset": dataset, "targets": {"margins": margins},
               "rim": {"port": "scripts/rim-fixtures.py", "upstream": UPSTREAM, "numpy": np.__version__,
                       "options": {"max_iterations": 1000, "convcrit": 0.01, "cap": 0, **options},
                       "iterations": iterations, "diffError": diff, "sum": float(weights.sum()),
                       "variables": variables, "cells": out}}
    os.makedirs("test/fixtures/rim", exist_ok=True)
    with open(os.path.join("test/fixtures/rim", name + ".json"), "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"{name}: {iterations} iterations, last change {diff:.3g}, sum {weights.sum():.15g}")


def margin(variable, **raw):
    total = sum(raw.values())
    return {"variable": variable, "proportions": {code.lstrip("_"): p / total for code, p in raw.items()}}


# The targets of scripts/weight-fixtures.R's nhanes-rake and gss-rake cases.
race_nh = margin("race", _1=0.16, _2=0.64, _3=0.12, _4=0.08)
age_nh = margin("agecat", _1=0.26, _2=0.27, _3=0.28, _4=0.19)
sex_nh = margin("RIAGENDR", _1=0.49, _2=0.51)
sex_gss = margin("sex", _1=0.48, _2=0.5183, NA=0.0017)
race_gss = margin("race", _1=0.75, _2=0.14, _3=0.1077, NA=0.0023)
degree_gss = margin("degree", _0=0.15, _1=0.48, _2=0.08, _3=0.18, _4=0.1074, NA=0.0026)

if __name__ == "__main__":
    run_case("nhanes-rim", "nhanes_2009_2010_survey.csv.gz", "nhanes", [race_nh, age_nh, sex_nh])
    run_case("gss-rim", "gss_1972_2024_sub.csv.gz", "gss", [sex_gss, race_gss, degree_gss])
    # RIM's cap (on the weight over the mean weight, applied after every iteration): no engine
    # option does the same (see docs/weighting.md); the test shows how far --trim lands from it.
    run_case("nhanes-rim-cap", "nhanes_2009_2010_survey.csv.gz", "nhanes", [race_nh, age_nh, sex_nh], cap=1.6)
