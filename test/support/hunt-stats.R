# R's figures for test/hunt-stats.test.ts: one process per test run, fed every random table
# of the run as one JSON file; writes one JSON file of R's figures, in the queries' order.
#
#   Rscript test/support/hunt-stats.R QUERIES.json OUT.json
#
# Nothing here reads the engine's expressions: each condition comes as a tree
# ({all}, {and}, {or}, {not}, {var, missing}, {var, items: [{value} | {min?, max?}]}) and is
# evaluated on the CSV with the datasets' missing-value rule (a blank never matches a value
# or a range; NOT includes blanks). Every figure comes from svydesign / subset / svytotal /
# svymean / svyby / svycontrast / svychisq on subset(design, base), a domain of the whole
# file's design, as the engine's docs say; deff = "replace".
suppressPackageStartupMessages({
  library(survey)
  library(jsonlite)
})
options(survey.lonely.psu = "fail")
args <- commandArgs(trailingOnly = TRUE)
input <- fromJSON(args[1], simplifyVector = FALSE)

# Datasets: name -> list(data, spec, designs). Optional in a dataset's spec: strata and psu
# (a Taylor design), replicate (svrepdesign's type, columns, scale, rscales, mse, rho), multi
# (multi-response variables: name, columns, counted or delimiter) and calibrations (weights
# made by the engine's weightDataset: name, method, margins, total, made by R here from the
# dataset's design).
# Every design object carries .row, the row of the data each of its rows is: a domain of a
# calibrated design keeps every row (survey sets the others' weight to 0), others drop them.
datasets <- list()
for (d in input$datasets) {
  df <- read.csv(gzfile(d$csv), na.strings = "", colClasses = if (is.null(d$text)) NA else setNames(rep("character", length(d$text)), unlist(d$text)))
  df$.row <- seq_len(nrow(df))
  datasets[[d$name]] <- list(df = df, spec = d, designs = list())
}
rowsOf <- function(design) design$variables$.row

# A multi-response variable: per value, who holds it; and who gave no answer (blank in
# every member column). Dichotomies: column k holds value k when it is the counted value;
# categories: each column holds one value; delimited: one column of values split at the
# delimiter (parts trimmed, empty parts ignored).
multiOf <- function(ds, name) {
  for (m in ds$spec$multi) if (m$name == name) {
    cols <- unlist(m$columns)
    blank <- Reduce(`&`, lapply(cols, function(col) is.na(ds$df[[col]])))
    if (!is.null(m$counted)) {
      values <- seq_along(cols)
      holds <- sapply(cols, function(col) !is.na(ds$df[[col]]) & as.character(ds$df[[col]]) == m$counted)
    } else if (!is.null(m$delimiter)) {
      parts <- lapply(strsplit(ifelse(is.na(ds$df[[cols[1]]]), "", as.character(ds$df[[cols[1]]])), m$delimiter, fixed = TRUE),
                      function(p) { p <- trimws(p); as.numeric(p[p != ""]) })
      values <- sort(unique(unlist(parts)))
      holds <- sapply(values, function(v) vapply(parts, function(p) v %in% p, logical(1)))
    } else {
      values <- sort(unique(unlist(lapply(cols, function(col) ds$df[[col]][!is.na(ds$df[[col]])]))))
      holds <- sapply(values, function(v) Reduce(`|`, lapply(cols, function(col) !is.na(ds$df[[col]]) & ds$df[[col]] == v)))
    }
    dim(holds) <- c(nrow(ds$df), length(values))
    return(list(values = values, holds = holds, blank = blank))
  }
  NULL
}
for (name in names(datasets)) {
  datasets[[name]]$multi <- list()
  for (m in datasets[[name]]$spec$multi) datasets[[name]]$multi[[m$name]] <- multiOf(datasets[[name]], m$name)
}

# The design of a table run with weight `weight` (NULL: the dataset's first; NA: unweighted,
# every respondent 1). Replicate designs serve only their own weight; any other weight gets
# the simple design, as the engine's docs say. A calibrated weight on a Taylor design is R's
# rake() / postStratify() / calibrate() of the design with the base weight; on a simple or
# replicate design it is a fixed weight.
designFor <- function(ds, weight, data = ds$df) {
  spec <- ds$spec
  w <- weightVector(ds, weight)
  data$.w <- w[data$.row]
  if (!is.null(spec$replicate) && identical(weight, spec$weight)) {
    r <- spec$replicate
    return(svrepdesign(data = data, weights = ~.w, repweights = data[, unlist(r$columns)], combined.weights = TRUE,
                       type = r$type, scale = r$scale, rscales = unlist(r$rscales), rho = r$rho, mse = isTRUE(r$mse)))
  }
  cal <- calibrationOf(ds, weight)
  if (!is.null(spec$strata) && !is.null(cal)) return(calibrated(ds, cal))
  if (!is.null(spec$strata)) {
    return(svydesign(ids = as.formula(paste0("~", spec$psu)), strata = as.formula(paste0("~", spec$strata)),
                     weights = ~.w, nest = TRUE, data = data))
  }
  svydesign(ids = ~1, weights = ~.w, data = data)
}
calibrationOf <- function(ds, weight) {
  for (cal in ds$spec$calibrations) if (identical(cal$name, weight)) return(cal)
  NULL
}
# The calibrated design, from the design with the base weight (the dataset's first).
calibrated <- function(ds, cal) {
  key <- paste0("calibrated:", cal$name)
  if (!is.null(ds$designs[[key]])) return(ds$designs[[key]])
  spec <- ds$spec
  data <- ds$df
  data$.w <- data[[spec$weight]]
  for (m in cal$margins) data[[paste0(".f_", m$variable)]] <- factor(data[[m$variable]])
  base <- if (!is.null(spec$strata)) svydesign(ids = as.formula(paste0("~", spec$psu)), strata = as.formula(paste0("~", spec$strata)),
                                               weights = ~.w, nest = TRUE, data = data) else svydesign(ids = ~1, weights = ~.w, data = data)
  total <- if (is.null(cal$total)) sum(data$.w) else cal$total
  frame <- function(m) {
    f <- data.frame(factor(names(m$proportions), levels = levels(data[[paste0(".f_", m$variable)]])), total * unlist(m$proportions))
    names(f) <- c(paste0(".f_", m$variable), "Freq")
    f
  }
  formulas <- lapply(cal$margins, function(m) as.formula(paste0("~.f_", m$variable)))
  out <- if (cal$method == "rake") {
    rake(base, formulas, lapply(cal$margins, frame), control = list(maxit = 10, epsilon = 1, verbose = FALSE))
  } else if (cal$method == "poststratify") {
    postStratify(base, formulas[[1]], frame(cal$margins[[1]]))
  } else {
    # calibrate(~a + b): the intercept's total, then every category but the first of each margin.
    population <- total
    for (m in cal$margins) {
      levs <- levels(data[[paste0(".f_", m$variable)]])
      p <- unlist(m$proportions)[levs]
      population <- c(population, total * p[-1])
    }
    calibrate(base, as.formula(paste("~", paste(paste0(".f_", vapply(cal$margins, function(m) m$variable, "")), collapse = "+"))),
              unname(population), calfun = cal$method)
  }
  datasets[[ds$spec$name]]$designs[[key]] <<- out
  out
}
weightVector <- function(ds, weight) {
  if (identical(weight, NA)) return(rep(1, nrow(ds$df)))
  cal <- calibrationOf(ds, weight)
  if (!is.null(cal)) return(unname(weights(calibrated(ds, cal))))
  ds$df[[weight]]
}
designOf <- function(ds, weight) {
  key <- if (identical(weight, NA)) "<unweighted>" else weight
  if (is.null(ds$designs[[key]])) datasets[[ds$spec$name]]$designs[[key]] <<- designFor(ds, weight)
  datasets[[ds$spec$name]]$designs[[key]]
}

# A condition over the rows of ds's data, from its tree (a blank never matches a value or a
# range; NOT includes blanks; none(...) is of those who answered).
ev <- function(node, ds) {
  df <- ds$df
  n <- nrow(df)
  if (!is.null(node$all)) return(rep(TRUE, n))
  if (!is.null(node$and)) return(Reduce(`&`, lapply(node$and, ev, ds)))
  if (!is.null(node$or)) return(Reduce(`|`, lapply(node$or, ev, ds)))
  if (!is.null(node$not)) return(!ev(node$not, ds))
  multi <- ds$multi[[node$var]]
  if (!is.null(multi)) {
    if (isTRUE(node$missing)) return(multi$blank)
    has <- function(v) { k <- match(as.numeric(v), multi$values); if (is.na(k)) rep(FALSE, n) else multi$holds[, k] }
    if (!is.null(node$every)) return(Reduce(`&`, lapply(node$every, has)))
    if (!is.null(node$none)) return(!multi$blank & !Reduce(`|`, lapply(node$none, has)))
    m <- rep(FALSE, n)
    for (item in node$items) {
      if (!is.null(item$value)) { m <- m | has(item$value); next }
      lo <- if (is.null(item$min)) -Inf else as.numeric(item$min)
      hi <- if (is.null(item$max)) Inf else as.numeric(item$max)
      for (v in multi$values[multi$values >= lo & multi$values <= hi]) m <- m | has(v)
    }
    return(m)
  }
  x <- df[[node$var]]
  if (is.null(x)) stop(paste("no column", node$var))
  if (isTRUE(node$missing)) return(is.na(x))
  if (!is.null(node$none)) return(!is.na(x) & !(x %in% as.numeric(unlist(node$none))))
  if (!is.null(node$every)) stop(paste("all() on", node$var, "which is not multi-response"))
  m <- rep(FALSE, n)
  for (item in node$items) {
    if (!is.null(item$value)) {
      m <- m | (!is.na(x) & x == as.numeric(item$value))
    } else {
      lo <- if (is.null(item$min)) -Inf else as.numeric(item$min)
      hi <- if (is.null(item$max)) Inf else as.numeric(item$max)
      m <- m | (!is.na(x) & x >= lo & x <= hi)
    }
  }
  m
}
num <- function(x) { x <- unname(as.numeric(x)); x[is.na(x)] <- NaN; x }

results <- list()
for (q in input$queries) {
  started <- proc.time()[["elapsed"]]
  ds <- datasets[[q$dataset]]
  df <- ds$df
  # The query's weight: the dataset's first, another (a calibrated one), or none (every respondent 1).
  weightName <- if (isTRUE(q$unweighted)) NA else if (is.null(q$weight)) ds$spec$weight else q$weight
  design <- designOf(ds, weightName)
  ds <- datasets[[q$dataset]]
  w <- weightVector(ds, weightName)
  b <- ev(q$base, ds)
  isMulti <- function(v) !is.null(v) && !is.null(ds$multi[[v]])
  blankOf <- function(v) if (isMulti(v)) ds$multi[[v]]$blank else is.na(df[[v]])
  # Entries: indicator of each row / column entry (expression tree, value of a variable, its
  # net (a multi-response variable's "any of its values"), or its blank).
  entry <- function(e) {
    if (!is.null(e$tree)) return(ev(e$tree, ds))
    if (isTRUE(e$missing)) return(blankOf(e$variable))
    if (isMulti(e$variable)) {
      multi <- ds$multi[[e$variable]]
      if (isTRUE(e$net)) return(rowSums(multi$holds) > 0)
      return(multi$holds[, match(as.numeric(e$value), multi$values)])
    }
    x <- df[[e$variable]]
    !is.na(x) & x == as.numeric(e$value)
  }
  R <- lapply(q$rows, entry)
  C <- lapply(q$columns, entry)
  nr <- length(R); nc <- length(C)
  valid <- identical(q$percentBase, "valid")
  kish <- identical(q$se, "kish")
  pooled <- identical(q$test, "pooled-effective")
  population <- identical(q$deff, "population")
  # Variables of the other axis that the valid bases are of: answered = non-blank.
  answered <- function(e) if (is.null(e$variable)) rep(TRUE, nrow(df)) else !blankOf(e$variable)
  # Expanded variables: the values of the file and whether the base has blanks.
  expanded <- lapply(q$expanded, function(v) {
    if (isMulti(v)) return(list(variable = v, values = ds$multi[[v]]$values, baseBlanks = sum(b & ds$multi[[v]]$blank)))
    x <- df[[v]]
    list(variable = v, values = sort(unique(x[!is.na(x)])), baseBlanks = sum(b & is.na(x)))
  })

  # Figures go to survey's functions as matrices over the domain's rows (no copies of the
  # data): the base as a domain of the whole file's design (subset()), or with domain "base"
  # a design of the base's rows alone (simple designs).
  empty <- sum(b) == 0
  dom <- if (empty) NULL else if (identical(q$domain, "base")) designFor(ds, weightName, data = df[b, , drop = FALSE]) else subset(update(design, .b = b[rowsOf(design)]), .b)
  on <- function(x, d = dom) x[rowsOf(d)]
  cellOf <- function(i, j) as.numeric(on(b & R[[i]] & C[[j]]))
  totals <- matrix(NaN, nr, nc); totalSE <- totals; totalMoE <- totals
  prop <- matrix(NaN, nr, nc); propSE <- prop; propDeff <- prop; propMoE <- prop; ebase <- prop
  if (empty && !identical(q$domain, "base")) {
    # An empty base: its domain has no rows for subset(); every cell's total is the svytotal
    # of a variable that is 0 on every respondent of the whole design (what the domain pads).
    zero <- svytotal(matrix(0, nrow(design$variables), 1, dimnames = list(NULL, "zero")), design)
    totals[, ] <- num(coef(zero)); totalSE[, ] <- num(SE(zero))
    ci <- confint(zero); totalMoE[, ] <- num((ci[, 2] - ci[, 1]) / 2)
  }
  # An empty base with domain "base": no design can be made on no rows; each cell's total is
  # still the Σw of no respondent, 0 (its SE stays NaN: N − 1 < 1).
  if (empty && identical(q$domain, "base")) totals[, ] <- 0
  for (j in seq_len(nc)) {
    if (empty) break
    # Totals and their SEs: svytotal of the column's cells.
    M <- sapply(seq_len(nr), function(i) cellOf(i, j)); dim(M) <- c(length(rowsOf(dom)), nr); colnames(M) <- paste0("r", seq_len(nr))
    tot <- svytotal(M, dom)
    totals[, j] <- num(coef(tot)); totalSE[, j] <- num(SE(tot))
    ci <- confint(tot); totalMoE[, j] <- num((ci[, 2] - ci[, 1]) / 2)
    # Column proportions: svymean of the row's cells in the domain of their denominator (the
    # column, AND answered the row variable when valid), one call per distinct denominator.
    classes <- list()
    for (i in seq_len(nr)) {
      key <- if (valid && !is.null(q$rows[[i]]$variable)) q$rows[[i]]$variable else "."
      classes[[key]] <- c(classes[[key]], i)
    }
    for (key in names(classes)) {
      rows <- classes[[key]]
      den <- b & C[[j]]
      if (key != ".") den <- den & !blankOf(key)
      if (sum(w[den]) == 0) next
      rowsOk <- rows[!(valid & vapply(rows, function(i) isTRUE(q$rows[[i]]$missing), logical(1)))]
      if (length(rowsOk) == 0) next
      ebase[rowsOk, j] <- sum(w[den])^2 / sum(w[den]^2)
      sub <- dom[on(den), ]
      M <- sapply(rowsOk, function(i) as.numeric(on(R[[i]] & den, sub))); dim(M) <- c(length(rowsOf(sub)), length(rowsOk)); colnames(M) <- paste0("r", rowsOk)
      if (is.null(dom$postStrata)) {
        m <- svymean(M, sub, deff = if (population) TRUE else "replace")
        propDeff[rowsOk, j] <- num(deff(m))
      } else {
        # A calibrated design: svymean's deff divides by svyvar(x, design) / n (times
        # (psum - n) / psum with deff = TRUE), whose value does not depend on the calibration
        # but whose SEs, computed with it, cost minutes; so svyvar runs on the domain's rows
        # and weights as a plain design.
        m <- svymean(M, sub)
        inDen <- on(den, sub)
        plain <- svydesign(ids = ~1, weights = ~.w, data = data.frame(.w = w[den]))
        nobs <- sum(w[den] != 0); psum <- sum(w[den])
        vsrs <- diag(as.matrix(coef(svyvar(M[inDen, , drop = FALSE], plain)))) / nobs
        if (population) vsrs <- if (psum < nobs) NA * vsrs else vsrs * (psum - nobs) / psum
        propDeff[rowsOk, j] <- num(SE(m)^2 / vsrs)
      }
      prop[rowsOk, j] <- num(coef(m)); propSE[rowsOk, j] <- num(SE(m))
      ci <- confint(m)
      propMoE[rowsOk, j] <- num((ci[, 2] - ci[, 1]) / 2)
    }
  }
  # Kish: the SE of p on the column's effective base, plain arithmetic (docs/statistics.md).
  # p from the plain sums (a cell holding its whole column is exactly 1 there, where svymean's
  # mean can be 1 - 1e-16 and give an SE of 1e-9). linSE: the linearization SE, kept for the
  # comparison of design effects.
  linSE <- propSE
  if (kish) {
    pk <- prop
    for (i in seq_len(nr)) for (j in seq_len(nc)) if (!is.nan(prop[i, j])) {
      den <- b & C[[j]]
      if (valid && !is.null(q$rows[[i]]$variable)) den <- den & !blankOf(q$rows[[i]]$variable)
      pk[i, j] <- sum(w[den & R[[i]]]) / sum(w[den])
    }
    propSE <- sqrt(pk * (1 - pk) / ebase); propMoE <- qnorm(0.975) * propSE
  }
  rowTotals <- sapply(seq_len(nr), function(i) sum(w[b & R[[i]]]))
  rowTotalN <- sapply(seq_len(nr), function(i) sum(b & R[[i]]))
  colTotals <- sapply(seq_len(nc), function(j) sum(w[b & C[[j]]]))
  colTotalN <- sapply(seq_len(nc), function(j) sum(b & C[[j]]))
  rowShare <- sapply(seq_len(nr), function(i) {
    if (valid && isTRUE(q$rows[[i]]$missing)) return(NaN)
    of <- if (valid) b & answered(q$rows[[i]]) else b
    sum(w[b & R[[i]]]) / sum(w[of])
  })
  cells <- list()
  k <- 0
  for (i in seq_len(nr)) for (j in seq_len(nc)) {
    k <- k + 1
    inCell <- b & R[[i]] & C[[j]]
    # Horizontal %: of the row (AND answered the column variable when valid); table %: of
    # the base (AND answered both variables when valid).
    rden <- b & R[[i]]; tden <- b
    if (valid) { rden <- rden & answered(q$columns[[j]]); tden <- tden & answered(q$rows[[i]]) & answered(q$columns[[j]]) }
    undefinedRow <- valid && isTRUE(q$columns[[j]]$missing)
    undefinedTable <- valid && (isTRUE(q$columns[[j]]$missing) || isTRUE(q$rows[[i]]$missing))
    cells[[k]] <- list(
      weighted = sum(w[inCell]), respondents = sum(inCell), sumSq = sum(w[inCell]^2),
      total = totals[i, j], totalSE = totalSE[i, j], totalMoE = totalMoE[i, j],
      columnPct = prop[i, j], columnPctSE = propSE[i, j], columnPctMoE = propMoE[i, j], linSE = linSE[i, j], deff = propDeff[i, j], ebase = ebase[i, j],
      index = 100 * prop[i, j] / rowShare[i],
      rowPct = if (undefinedRow) NaN else sum(w[inCell]) / sum(w[rden]),
      tablePct = if (undefinedTable) NaN else sum(w[inCell]) / sum(w[tden])
    )
  }
  # Column comparisons within each group, over the rows of a class (rows whose denominator
  # is the same: every row, or with valid those of one variable); "No answer" rows get none.
  comparisons <- list()
  calibratedDesign <- !is.null(dom) && !is.null(dom$postStrata)
  for (g in q$groups) {
    overlap <- is.list(g) && !is.null(g$columns) && isTRUE(g$overlap)
    g1 <- (if (is.list(g) && !is.null(g$columns)) unlist(g$columns) else unlist(g)) + 1
    classes <- list()
    for (i in seq_len(nr)) {
      if (isTRUE(q$rows[[i]]$missing)) next
      key <- if (valid && !is.null(q$rows[[i]]$variable)) q$rows[[i]]$variable else "."
      classes[[key]] <- c(classes[[key]], i)
    }
    for (key in names(classes)) {
      rows <- classes[[key]]
      answeredKey <- if (key != ".") !blankOf(key) else rep(TRUE, nrow(df))
      pairs <- list()
      add <- function(i, ja, jb, d, s, z = if (is.finite(s) && s > 0) d / s else NaN) {
        pairs[[length(pairs) + 1]] <<- list(row = i - 1, columnA = ja - 1, columnB = jb - 1, difference = d, se = s, z = z, p = if (is.nan(z)) NaN else 2 * pnorm(-abs(z)))
      }
      if (empty) {
        for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) add(i, g1[a], g1[c], NaN, NaN)
      } else if (pooled) {
        # The pooled two-proportion z on Kish effective bases: plain arithmetic, its square
        # checked against prop.test's X² (docs/statistics.md).
        for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) {
          ja <- g1[a]; jb <- g1[c]
          pa <- prop[i, ja]; pb <- prop[i, jb]; ea <- ebase[i, ja]; eb <- ebase[i, jb]
          pbar <- (ea * pa + eb * pb) / (ea + eb)
          s <- sqrt(pbar * (1 - pbar) * (1 / ea + 1 / eb))
          if (is.finite(s) && s > 0) {
            x2 <- suppressWarnings(prop.test(pmin(c(pa * ea, pb * eb), c(ea, eb)), c(ea, eb), correct = FALSE)$statistic[[1]]) # p of 1 can round above it
            if (abs(x2 - ((pa - pb) / s)^2) > 1e-8 * max(1, x2)) stop(sprintf("%s: pooled z^2 %.17g, prop.test X^2 %.17g", q$id, ((pa - pb) / s)^2, x2))
          }
          add(i, ja, jb, num(pa - pb), num(s))
        }
      } else if ((overlap || calibratedDesign) && !inherits(dom, "svyrep.design")) {
        # Columns that may share respondents, or a domain of a calibrated design (which keeps
        # every row, so svyby's groups would hold the others): one svytotal of every row's
        # numerators y_i a_c and every column's denominator a_c, and each difference of two
        # ratios by the delta method (svycontrast of an expression), which for linearization
        # is the ratios' own variance (scripts/overlap-fixtures.R checks the two agree).
        dens <- lapply(g1, function(j) b & C[[j]] & answeredKey)
        present <- vapply(dens, function(d) sum(w[d]) > 0, logical(1))
        M <- sapply(seq_along(g1), function(a) as.numeric(on(dens[[a]])))
        dim(M) <- c(length(rowsOf(dom)), length(g1))
        colnames(M) <- paste0("d", seq_along(g1))
        for (i in rows) {
          Ni <- sapply(seq_along(g1), function(a) as.numeric(on(R[[i]] & dens[[a]])))
          dim(Ni) <- c(length(rowsOf(dom)), length(g1)); colnames(Ni) <- paste0("n", i, "_", seq_along(g1))
          M <- cbind(M, Ni)
        }
        tot <- svytotal(M, dom)
        for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) {
          if (!present[a] || !present[c]) { add(i, g1[a], g1[c], NaN, NaN); next }
          e <- substitute(na / da - nb / db, list(na = as.name(paste0("n", i, "_", a)), da = as.name(paste0("d", a)),
                                                  nb = as.name(paste0("n", i, "_", c)), db = as.name(paste0("d", c))))
          sc <- svycontrast(tot, e)
          add(i, g1[a], g1[c], num(coef(sc)), num(SE(sc)))
        }
      } else if (overlap || calibratedDesign) {
        # Replicate designs: the replicate variance of the difference of the two ratios
        # themselves (svyratio under every replicate), not a linearization of it; one
        # svyratio per pair, of the pair's two columns alone. One call over the whole group
        # would drop, for every pair, each replicate under which any column of the group is
        # empty (svrVar's na.action on the matrix of every ratio); the SE of p_A - p_B drops
        # only those under which A or B is (docs/statistics.md, replicate weights).
        dens <- lapply(g1, function(j) b & C[[j]] & answeredKey)
        present <- vapply(dens, function(d) sum(w[d]) > 0, logical(1))
        if (sum(present) < 2) {
          for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) add(i, g1[a], g1[c], NaN, NaN)
        } else {
          sub <- dom
          for (a in seq_along(g1)) sub$variables[[paste0(".d", a)]] <- as.numeric(on(dens[[a]]))
          for (i in rows) for (a in seq_along(g1)) sub$variables[[paste0(".n", i, "_", a)]] <- as.numeric(on(R[[i]] & dens[[a]]))
          for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) {
            if (!present[a] || !present[c]) { add(i, g1[a], g1[c], NaN, NaN); next }
            nums <- paste0(".n", i, "_", c(a, c)); dens2 <- paste0(".d", c(a, c))
            ratios <- svyratio(as.formula(paste("~", paste(nums, collapse = "+"))), as.formula(paste("~", paste(dens2, collapse = "+"))), sub, covmat = TRUE)
            # coef(ratios): n_a/d_a, n_c/d_a, n_a/d_c, n_c/d_c.
            contrast <- setNames(rep(0, length(coef(ratios))), names(coef(ratios)))
            contrast[paste0(nums[1], "/", dens2[1])] <- 1; contrast[paste0(nums[2], "/", dens2[2])] <- -1
            sc <- svycontrast(ratios, contrast)
            add(i, g1[a], g1[c], num(coef(sc)), num(SE(sc)))
          }
        }
      } else {
        # Disjoint columns: svyby over the group's columns, covmat = TRUE, then svycontrast of
        # each pair. One call per group and row class.
        grp <- rep(NA_integer_, nrow(df))
        for (j in g1) grp[b & C[[j]]] <- j
        den <- !is.na(grp) & answeredKey
        if (sum(den) == 0) {
          for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) add(i, g1[a], g1[c], NaN, NaN)
        } else {
          sub <- dom[on(den), ]
          sub <- update(sub, .grp = factor(grp[rowsOf(sub)]))
          # Every row of the class at once: y_i = row i among the denominator; in each column of
          # the group, its mean is the column proportion.
          Y <- sapply(rows, function(i) as.numeric(on(R[[i]], sub))); dim(Y) <- c(length(rowsOf(sub)), length(rows))
          colnames(Y) <- paste0(".y", rows)
          sub2 <- sub
          sub2$variables <- cbind(sub$variables, as.data.frame(Y))
          by <- svyby(as.formula(paste0("~", paste(colnames(Y), collapse = "+"))), ~.grp, sub2, svymean, covmat = TRUE)
          levs <- as.integer(as.character(by[[".grp"]]))
          # A column with no respondent is not a level of svyby: its pairs are untestable.
          if (length(levs) < 2) levs <- integer(0) # one column present: no pair to test
          # Replicate designs: svyby over the pair's two columns alone (as svyratio above: the
          # whole group's svyby would drop, for every pair, the replicates under which any
          # of its columns is empty).
          replicate <- inherits(sub2, "svyrep.design")
          pairBy <- list()
          for (i in rows) for (a in seq_along(g1)) for (c in seq_along(g1)) if (c > a) {
            ja <- g1[a]; jb <- g1[c]
            if (!(ja %in% levs) || !(jb %in% levs)) { add(i, ja, jb, NaN, NaN); next }
            pby <- by; plevs <- levs
            if (replicate) {
              key <- paste(ja, jb)
              if (is.null(pairBy[[key]])) {
                s2 <- sub2[sub2$variables$.grp %in% c(ja, jb), ]
                s2 <- update(s2, .grp = factor(as.character(.grp)))
                pairBy[[key]] <- svyby(as.formula(paste0("~", paste(colnames(Y), collapse = "+"))), ~.grp, s2, svymean, covmat = TRUE)
              }
              pby <- pairBy[[key]]; plevs <- as.integer(as.character(pby[[".grp"]]))
            }
            # coef(by) is variable-major: (level 1, .y first), (level 2, .y first), ...
            at <- (match(i, rows) - 1) * length(plevs)
            contrast <- rep(0, length(coef(pby)))
            contrast[at + match(ja, plevs)] <- 1; contrast[at + match(jb, plevs)] <- -1
            sc <- svycontrast(pby, contrast)
            add(i, ja, jb, num(coef(sc)), num(SE(sc)))
          }
        }
      }
      # Adjusted p over each row's pairs of this group, as p.adjust (NaN pairs do not count).
      for (i in rows) {
        at <- which(vapply(pairs, function(x) x$row == i - 1, logical(1)))
        if (length(at) == 0) next
        ps <- sapply(pairs[at], function(x) x$p); ps[is.nan(ps)] <- NA
        adj <- p.adjust(ps, method = q$correction)
        for (t in seq_along(at)) pairs[[at[t]]]$adjusted <- num(adj[t])
      }
      comparisons <- c(comparisons, pairs)
    }
  }
  chisq <- lapply(q$chisq, function(t) {
    none <- list(rowVariable = t$rowVariable, columnVariable = t$columnVariable, statistic = NaN, ndf = NaN, ddf = NaN, p = NaN)
    if (empty) return(none)
    sub <- update(dom, .rv = factor(on(df[[t$rowVariable]])), .cv = factor(on(df[[t$columnVariable]])))
    f <- tryCatch(svychisq(~.rv + .cv, sub, statistic = "F"), error = function(e) NULL)
    if (is.null(f)) return(none)
    list(rowVariable = t$rowVariable, columnVariable = t$columnVariable, statistic = num(f$statistic),
         ndf = num(f$parameter[["ndf"]]), ddf = num(f$parameter[["ddf"]]), p = num(f$p.value))
  })
  targets <- lapply(q$targets, function(t) { m <- b & ev(t, ds); list(weighted = sum(w[m]), respondents = sum(m)) })
  results[[length(results) + 1]] <- list(
    id = q$id,
    base = list(weighted = sum(w[b]), respondents = sum(b)),
    rowShare = as.list(num(rowShare)),
    rowTotals = lapply(seq_len(nr), function(i) list(weighted = rowTotals[i], respondents = rowTotalN[i])),
    columnTotals = lapply(seq_len(nc), function(j) list(weighted = colTotals[j], respondents = colTotalN[j])),
    expanded = expanded, cells = cells, comparisons = comparisons, chisq = chisq, targets = targets
  )
  message(sprintf("%s %.1f s", q$id, proc.time()[["elapsed"]] - started))
}
writeLines(toJSON(results, auto_unbox = TRUE, digits = NA, na = "string"), args[2])
