# Reference weights for `crosstab weight`, made by R's survey package.
# Run from the repository root:  Rscript scripts/weight-fixtures.R [--acs ACS.csv.gz]
# (--acs adds the ACS case: about 5 minutes and 2 GB for R's rake() on 2.7M respondents).
# Writes test/fixtures/weights/<case>.json: the targets (in the engine's targets format),
# the options, and R's result as the adjustment factor (R's weight / base weight) per cell
# of the target variables (the script stops if R's factor is not constant within a cell;
# after trimming, which breaks that, R's weight per respondent with its cell and base weight),
# R's iteration count where R reports one, and a weighted table computed with R's weights.
suppressMessages({ library(survey); library(jsonlite) })

read_gz <- function(file) read.csv(gzfile(file.path("datasets", file)))
cli <- commandArgs(trailingOnly = TRUE)
acs_file <- if ("--acs" %in% cli) cli[which(cli == "--acs") + 1] else NULL
gss <- read_gz("gss_1972_2024_sub.csv.gz")
nhanes <- read_gz("nhanes_2009_2010_survey.csv.gz")

# A variable's value as the engine's targets write it: the value text, "NA" for a blank.
key <- function(x) ifelse(is.na(x), "NA", as.character(x))
as_factor <- function(x) factor(key(x), levels = unique(c(as.character(sort(unique(x[!is.na(x)]))), if (any(is.na(x))) "NA")))

margin <- function(variable, proportions) list(variable = variable, proportions = as.list(proportions))
props <- function(...) { p <- c(...); p / sum(p) }

# R's design over the target variables as factors (levels in the engine's value order, blanks last).
design_of <- function(data, weight, variables) {
  frame <- data.frame(w = data[[weight]])
  for (v in variables) frame[[v]] <- as_factor(data[[v]])
  svydesign(ids = ~1, weights = ~w, data = frame)
}

# Population margins for rake()/postStratify() from proportions of the base total.
pop_margin <- function(design, m, total) {
  levels <- levels(design$variables[[m$variable]])
  p <- unlist(m$proportions)[levels]
  if (any(is.na(p))) stop("targets miss a category of ", m$variable)
  df <- data.frame(factor(levels, levels = levels), Freq = as.vector(p) * total)
  names(df)[1] <- m$variable
  df
}

# calibrate()'s population vector: intercept (the first margin's total), then every level but the first.
pop_vector <- function(design, margins, total) {
  out <- c(`(Intercept)` = total)
  for (m in margins) {
    levels <- levels(design$variables[[m$variable]])
    p <- unlist(m$proportions)[levels]
    named <- setNames(as.vector(p[-1]) * total, paste0(m$variable, levels[-1]))
    out <- c(out, named)
  }
  out
}

# R's weights as factors per cell of the target variables.
cells_of <- function(data, weight, variables, final) {
  cell <- do.call(paste, c(lapply(variables, function(v) key(data[[v]])), sep = "\r"))
  factor <- final / data[[weight]]
  by_cell <- split(factor, cell)
  spread <- sapply(by_cell, function(f) diff(range(f)) / mean(f))
  if (any(spread > 1e-12)) stop("R's adjustment is not constant within a cell")
  lapply(names(by_cell), function(name) list(values = as.list(setNames(strsplit(name, "\r")[[1]], variables)), factor = by_cell[[name]][1], respondents = length(by_cell[[name]])))
}

# Weighted totals of rows x columns with R's weights (blanks as "NA").
table_of <- function(data, final, rows, columns) {
  t <- tapply(final, list(key(data[[rows]]), key(data[[columns]])), sum)
  out <- list()
  for (r in rownames(t)) for (c in colnames(t)) if (!is.na(t[r, c])) out[[length(out) + 1]] <- list(row = r, column = c, weighted = t[r, c])
  list(rows = rows, columns = columns, cells = out)
}

run_case <- function(name, data, dataset, weight, method, margins, options = list(), group_by = NULL, table = NULL) {
  variables <- unique(c(group_by, sapply(margins(NULL), function(m) if (is.null(m$variable)) m$variables else m$variable)))
  groups <- if (is.null(group_by)) list(NULL) else as.list(levels(as_factor(data[[group_by]])))
  final <- numeric(nrow(data))
  iterations <- list()
  targets_groups <- list()
  for (g in groups) {
    rows <- if (is.null(g)) rep(TRUE, nrow(data)) else key(data[[group_by]]) == g
    part <- data[rows, , drop = FALSE]
    ms <- margins(g)
    mvars <- unique(unlist(lapply(ms, function(m) if (is.null(m$variable)) m$variables else m$variable)))
    d <- design_of(part, weight, mvars)
    total <- sum(part[[weight]])
    if (method == "rake") {
      ctl <- list(epsilon = options$epsilon, maxit = options$maxIterations)
      out <- rake(d, lapply(ms, function(m) as.formula(paste("~", m$variable))), lapply(ms, function(m) pop_margin(d, m, total)), control = ctl)
    } else if (method == "poststratify") {
      m <- ms[[1]]
      pop <- do.call(rbind, lapply(m$totals, function(cell) { df <- as.data.frame(setNames(as.list(unlist(cell$cell)), m$variables)); df$Freq <- cell$value; df }))
      for (v in m$variables) pop[[v]] <- factor(pop[[v]], levels = levels(d$variables[[v]]))
      out <- postStratify(d, as.formula(paste("~", paste(m$variables, collapse = "+"))), pop)
    } else {
      f <- as.formula(paste("~", paste(sapply(ms, function(m) m$variable), collapse = "+")))
      bounds <- if (is.null(options$bounds)) c(-Inf, Inf) else unlist(options$bounds)
      out <- calibrate(d, f, pop_vector(d, ms, total), calfun = method, bounds = bounds, epsilon = options$epsilon, maxit = options$maxIterations)
    }
    final[rows] <- weights(out)
    if (!is.null(g)) targets_groups[[g]] <- list(margins = ms)
  }
  trimmed <- NULL
  if (!is.null(options$trim)) {
    # trimWeights() over every respondent, as the engine's --trim: no longer constant per cell,
    # so R's weights are kept per respondent (cell, base weight, weight).
    before <- svydesign(ids = ~1, weights = ~final, data = data.frame(final = final))
    final <- weights(trimWeights(before, lower = options$trim[1], upper = options$trim[2]))
    cell <- do.call(paste, c(lapply(variables, function(v) key(data[[v]])), sep = "\r"))
    keys <- unique(cell)
    trimmed <- list(keys = keys, cell = match(cell, keys) - 1, base = data[[weight]], weight = final)
  }
  targets <- if (is.null(group_by)) list(margins = margins(NULL)) else list(groupBy = group_by, groups = targets_groups)
  fixture <- list(
    case = name, dataset = dataset, baseWeight = weight, method = method, options = options, targets = targets,
    r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey")),
             sum = sum(final), cells = if (is.null(trimmed)) cells_of(data, weight, variables, final) else NULL, respondents = trimmed,
             variables = as.list(variables),
             table = if (is.null(table)) NULL else table_of(data, final, table[1], table[2]))
  )
  writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = is.null(trimmed) && nrow(data) < 1e5, null = "null"), file.path("test/fixtures/weights", paste0(name, ".json")))
  cat(name, ": sum", format(sum(final), digits = 15), "\n")
}

nh <- "datasets/build/nhanes.arrow"
gs <- "datasets/build/gss.arrow"
race_nh <- margin("race", props(`1` = 0.16, `2` = 0.64, `3` = 0.12, `4` = 0.08))
age_nh <- margin("agecat", props(`1` = 0.26, `2` = 0.27, `3` = 0.28, `4` = 0.19))
sex_nh <- margin("RIAGENDR", props(`1` = 0.49, `2` = 0.51))

run_case("nhanes-rake", nhanes, nh, "WTMEC2YR", "rake", function(g) list(race_nh, age_nh, sex_nh),
         options = list(epsilon = 1e-8, maxIterations = 100), table = c("race", "HI_CHOL"))
run_case("nhanes-rake-r-defaults", nhanes, nh, "WTMEC2YR", "rake", function(g) list(race_nh, age_nh),
         options = list(epsilon = 1, maxIterations = 10))
# Loose thresholds: R stops after a few steps, where one step more or less moves the weights.
run_case("nhanes-rake-loose", nhanes, nh, "WTMEC2YR", "rake", function(g) list(race_nh, age_nh, sex_nh),
         options = list(epsilon = 0.002, maxIterations = 10))
run_case("nhanes-rake-trim", nhanes, nh, "WTMEC2YR", "rake", function(g) list(race_nh, age_nh, sex_nh),
         options = list(epsilon = 1e-8, maxIterations = 100, trim = c(5000, 120000)), table = c("race", "agecat"))
run_case("nhanes-linear", nhanes, nh, "WTMEC2YR", "linear", function(g) list(race_nh, age_nh, sex_nh),
         options = list(epsilon = 1e-7, maxIterations = 50), table = c("agecat", "HI_CHOL"))
run_case("nhanes-linear-bounded", nhanes, nh, "WTMEC2YR", "linear", function(g) list(race_nh, age_nh, sex_nh),
         options = list(epsilon = 1e-7, maxIterations = 50, bounds = c(0.75, 1.3)))
run_case("nhanes-logit", nhanes, nh, "WTMEC2YR", "logit", function(g) list(race_nh, age_nh, sex_nh),
         options = list(epsilon = 1e-7, maxIterations = 50, bounds = c(0.5, 2)), table = c("race", "RIAGENDR"))
cells <- list()
for (s in 1:2) for (a in 1:4) cells[[length(cells) + 1]] <- list(cell = c(as.character(s), as.character(a)), value = 1e7 * (s + a))
run_case("nhanes-poststratify-interlocked", nhanes, nh, "WTMEC2YR", "poststratify",
         function(g) list(list(variables = c("RIAGENDR", "agecat"), totals = cells)), table = c("agecat", "HI_CHOL"))
run_case("nhanes-rake-by-gender", nhanes, nh, "WTMEC2YR", "rake",
         function(g) if (is.null(g)) list(race_nh, age_nh) else if (g == "1") list(race_nh, age_nh) else list(margin("race", props(`1` = 0.2, `2` = 0.6, `3` = 0.12, `4` = 0.08)), age_nh),
         options = list(epsilon = 1e-9, maxIterations = 100), group_by = "RIAGENDR", table = c("race", "RIAGENDR"))

sex_gss <- margin("sex", props(`1` = 0.48, `2` = 0.5183, `NA` = 0.0017))
race_gss <- margin("race", props(`1` = 0.75, `2` = 0.14, `3` = 0.1077, `NA` = 0.0023))
degree_gss <- margin("degree", props(`0` = 0.15, `1` = 0.48, `2` = 0.08, `3` = 0.18, `4` = 0.1074, `NA` = 0.0026))
run_case("gss-rake", gss, gs, "wtssps", "rake", function(g) list(sex_gss, race_gss, degree_gss),
         options = list(epsilon = 1e-9, maxIterations = 100), table = c("degree", "sex"))
run_case("gss-logit", gss, gs, "wtssps", "logit", function(g) list(sex_gss, race_gss, degree_gss),
         options = list(epsilon = 1e-7, maxIterations = 50, bounds = c(0.4, 3)), table = c("race", "degree"))
run_case("gss-logit-loose", gss, gs, "wtssps", "logit", function(g) list(sex_gss, race_gss, degree_gss),
         options = list(epsilon = 0.01, maxIterations = 50, bounds = c(0.4, 3)))
# Per group, blanks included: a target set per value of race ("NA" for blanks), each over the
# categories its respondents have, tilted from their unweighted shares.
tilted_in <- function(data, v) {
  counts <- table(as_factor(data[[v]]))
  counts <- counts[counts > 0]
  raw <- as.vector(counts) * (1 + 0.2 * sin(seq_along(counts)))
  margin(v, setNames(raw / sum(raw), names(counts)))
}
run_case("gss-rake-by-race", gss, gs, "wtssps", "rake",
         function(g) { part <- if (is.null(g)) gss else gss[key(gss$race) == g, ]; list(tilted_in(part, "sex"), tilted_in(part, "degree")) },
         options = list(epsilon = 1e-9, maxIterations = 100), group_by = "race", table = c("degree", "race"))
run_case("gss-linear", gss, gs, "wtssps", "linear", function(g) list(sex_gss, race_gss, degree_gss),
         options = list(epsilon = 1e-7, maxIterations = 50))

if (!is.null(acs_file)) {
  # ACS person file: the weight and four target variables only (as the test builds it).
  variables <- c("STATE", "SEX", "RAC1P", "HISP")
  header <- strsplit(readLines(gzfile(acs_file), n = 1), ",")[[1]]
  classes <- ifelse(header %in% c("PWGTP", variables), NA, "NULL")
  classes[header == "STATE"] <- "character"
  acs <- read.csv(gzfile(acs_file), colClasses = classes)
  # Each category's unweighted share tilted by a fixed pattern, so that raking has work to do.
  tilted <- function(v) {
    counts <- table(as_factor(acs[[v]]))
    raw <- as.vector(counts) * (1 + 0.2 * sin(seq_along(counts)))
    margin(v, setNames(raw / sum(raw), names(counts)))
  }
  acs_margins <- lapply(variables, tilted)
  run_case("acs-rake", acs, "ACS", "PWGTP", "rake", function(g) acs_margins, options = list(epsilon = 1e-7, maxIterations = 50))
}
