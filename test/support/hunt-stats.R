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

# Datasets: name -> list(data, design builder)
datasets <- list()
for (d in input$datasets) {
  df <- read.csv(gzfile(d$csv), na.strings = "")
  datasets[[d$name]] <- list(df = df, spec = d)
}
makeDesign <- function(spec, data) {
  df <- data[, unique(c(spec$weight, spec$strata, spec$psu)), drop = FALSE]
  if (!is.null(spec$strata)) {
    svydesign(ids = as.formula(paste0("~", spec$psu)), strata = as.formula(paste0("~", spec$strata)),
              weights = as.formula(paste0("~", spec$weight)), nest = TRUE, data = df)
  } else {
    svydesign(ids = ~1, weights = as.formula(paste0("~", spec$weight)), data = df)
  }
}
for (name in names(datasets)) datasets[[name]]$design <- makeDesign(datasets[[name]]$spec, datasets[[name]]$df)

ev <- function(node, df) {
  n <- nrow(df)
  if (!is.null(node$all)) return(rep(TRUE, n))
  if (!is.null(node$and)) return(Reduce(`&`, lapply(node$and, ev, df)))
  if (!is.null(node$or)) return(Reduce(`|`, lapply(node$or, ev, df)))
  if (!is.null(node$not)) return(!ev(node$not, df))
  x <- df[[node$var]]
  if (is.null(x)) stop(paste("no column", node$var))
  if (isTRUE(node$missing)) return(is.na(x))
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
  ds <- datasets[[q$dataset]]
  df <- ds$df
  w <- df[[ds$spec$weight]]
  b <- ev(q$base, df)
  # Entries: indicator of each row / column entry (expression tree, value of a variable, or its blank).
  entry <- function(e) {
    if (!is.null(e$tree)) return(ev(e$tree, df))
    x <- df[[e$variable]]
    if (isTRUE(e$missing)) return(is.na(x))
    !is.na(x) & x == as.numeric(e$value)
  }
  R <- lapply(q$rows, entry)
  C <- lapply(q$columns, entry)
  nr <- length(R); nc <- length(C)
  valid <- identical(q$percentBase, "valid")
  # Variables of the other axis that the valid bases are of: answered = non-blank.
  answered <- function(e) if (is.null(e$variable)) rep(TRUE, nrow(df)) else !is.na(df[[e$variable]])
  # Expanded variables: the values of the file and whether the base has blanks.
  expanded <- lapply(q$expanded, function(v) {
    x <- df[[v]]
    list(variable = v, values = sort(unique(x[!is.na(x)])), baseBlanks = sum(b & is.na(x)))
  })

  # Figures go to survey's functions as matrices over the domain's rows (no copies of the data).
  cellOf <- function(i, j) as.numeric((b & R[[i]] & C[[j]])[b])
  empty <- sum(b) == 0
  dom <- if (empty) NULL else subset(update(ds$design, .b = b), .b)
  totals <- matrix(NaN, nr, nc); totalSE <- totals; totalMoE <- totals
  prop <- matrix(NaN, nr, nc); propSE <- prop; propDeff <- prop; propMoE <- prop; ebase <- prop
  if (empty) {
    # An empty base: its domain has no rows for subset(); every cell's total is the svytotal
    # of a variable that is 0 on every respondent of the whole design (what the domain pads).
    zero <- svytotal(matrix(0, nrow(df), 1, dimnames = list(NULL, "zero")), ds$design)
    totals[, ] <- num(coef(zero)); totalSE[, ] <- num(SE(zero))
    ci <- confint(zero); totalMoE[, ] <- num((ci[, 2] - ci[, 1]) / 2)
  }
  for (j in seq_len(nc)) {
    if (empty) break
    # Totals and their SEs: svytotal of the column's cells.
    M <- sapply(seq_len(nr), function(i) cellOf(i, j)); dim(M) <- c(sum(b), nr); colnames(M) <- paste0("r", seq_len(nr))
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
      if (key != ".") den <- den & !is.na(df[[key]])
      if (sum(w[den]) == 0) next
      rowsOk <- rows[!(valid & vapply(rows, function(i) isTRUE(q$rows[[i]]$missing), logical(1)))]
      if (length(rowsOk) == 0) next
      ebase[rowsOk, j] <- sum(w[den])^2 / sum(w[den]^2)
      sub <- dom[den[b], ]
      M <- sapply(rowsOk, function(i) cellOf(i, j)[den[b]]); dim(M) <- c(sum(den), length(rowsOk)); colnames(M) <- paste0("r", rowsOk)
      m <- svymean(M, sub, deff = "replace")
      prop[rowsOk, j] <- num(coef(m)); propSE[rowsOk, j] <- num(SE(m)); propDeff[rowsOk, j] <- num(deff(m))
      ci <- confint(m)
      propMoE[rowsOk, j] <- num((ci[, 2] - ci[, 1]) / 2)
    }
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
      columnPct = prop[i, j], columnPctSE = propSE[i, j], columnPctMoE = propMoE[i, j], deff = propDeff[i, j], ebase = ebase[i, j],
      index = 100 * prop[i, j] / rowShare[i],
      rowPct = if (undefinedRow) NaN else sum(w[inCell]) / sum(w[rden]),
      tablePct = if (undefinedTable) NaN else sum(w[inCell]) / sum(w[tden])
    )
  }
  # Column comparisons within each group (disjoint columns): svyby over the group's columns,
  # covmat = TRUE, then svycontrast of each pair. One call per group and row class.
  comparisons <- list()
  for (g in q$groups) {
    g1 <- unlist(g) + 1
    grp <- rep(NA_integer_, nrow(df))
    for (j in g1) grp[b & C[[j]]] <- j
    classes <- list()
    for (i in seq_len(nr)) {
      # The "No answer" row gets no comparisons (docs/tables.md, Missing answers).
      if (isTRUE(q$rows[[i]]$missing)) next
      key <- if (valid && !is.null(q$rows[[i]]$variable)) q$rows[[i]]$variable else "."
      classes[[key]] <- c(classes[[key]], i)
    }
    for (key in names(classes)) {
      rows <- classes[[key]]
      den <- !is.na(grp)
      if (key != ".") den <- den & !is.na(df[[key]])
      present <- sort(unique(grp[den]))
      # A column with no respondent is not a level of svyby: its pairs are untestable.
      if (sum(den) == 0) next
      sub <- update(dom[den[b], ], .grp = factor(grp[den]))
      # Every row of the class at once: y_i = row i among the denominator; in each column of
      # the group, its mean is the column proportion.
      Y <- sapply(rows, function(i) as.numeric(R[[i]][den])); dim(Y) <- c(sum(den), length(rows))
      colnames(Y) <- paste0(".y", rows)
      sub2 <- sub
      sub2$variables <- cbind(sub$variables, as.data.frame(Y))
      by <- svyby(as.formula(paste0("~", paste(colnames(Y), collapse = "+"))), ~.grp, sub2, svymean, covmat = TRUE)
      levs <- as.integer(as.character(by[[".grp"]]))
      if (length(levs) < 2) levs <- integer(0) # one column present: no pair to test
      for (i in rows) {
        first <- length(comparisons) + 1
        for (a in seq_along(g1)) for (c in seq_along(g1)) {
          if (c <= a) next
          ja <- g1[a]; jb <- g1[c]
          if (!(ja %in% levs) || !(jb %in% levs)) {
            comparisons[[length(comparisons) + 1]] <- list(row = i - 1, columnA = ja - 1, columnB = jb - 1, difference = NaN, se = NaN, z = NaN, p = NaN)
            next
          }
          # coef(by) is variable-major: (level 1, .y first), (level 2, .y first), ...
          at <- (match(i, rows) - 1) * length(levs)
          contrast <- rep(0, length(coef(by)))
          contrast[at + match(ja, levs)] <- 1; contrast[at + match(jb, levs)] <- -1
          sc <- svycontrast(by, contrast)
          d <- num(coef(sc)); s <- num(SE(sc))
          z <- if (is.finite(s) && s > 0) d / s else NaN
          comparisons[[length(comparisons) + 1]] <- list(row = i - 1, columnA = ja - 1, columnB = jb - 1, difference = d, se = s, z = z, p = if (is.nan(z)) NaN else 2 * pnorm(-abs(z)))
        }
        # Adjusted p over the row's pairs of this group, as p.adjust (NaN pairs do not count).
        if (length(comparisons) >= first) {
          at <- first:length(comparisons)
          ps <- sapply(comparisons[at], function(x) x$p); ps[is.nan(ps)] <- NA
          adj <- p.adjust(ps, method = q$correction)
          for (t in seq_along(at)) comparisons[[at[t]]]$adjusted <- num(adj[t])
        }
      }
    }
  }
  chisq <- lapply(q$chisq, function(t) {
    if (empty) return(list(rowVariable = t$rowVariable, columnVariable = t$columnVariable, statistic = NaN, ndf = NaN, ddf = NaN, p = NaN))
    sub <- update(dom, .rv = factor(df[[t$rowVariable]][b]), .cv = factor(df[[t$columnVariable]][b]))
    f <- tryCatch(svychisq(~.rv + .cv, sub, statistic = "F"), error = function(e) NULL)
    if (is.null(f)) return(list(rowVariable = t$rowVariable, columnVariable = t$columnVariable, statistic = NaN, ndf = NaN, ddf = NaN, p = NaN))
    list(rowVariable = t$rowVariable, columnVariable = t$columnVariable, statistic = num(f$statistic),
         ndf = num(f$parameter[["ndf"]]), ddf = num(f$parameter[["ddf"]]), p = num(f$p.value))
  })
  targets <- lapply(q$targets, function(t) { m <- b & ev(t, df); list(weighted = sum(w[m]), respondents = sum(m)) })
  results[[length(results) + 1]] <- list(
    id = q$id,
    base = list(weighted = sum(w[b]), respondents = sum(b)),
    rowShare = as.list(num(rowShare)),
    rowTotals = lapply(seq_len(nr), function(i) list(weighted = rowTotals[i], respondents = rowTotalN[i])),
    columnTotals = lapply(seq_len(nc), function(j) list(weighted = colTotals[j], respondents = colTotalN[j])),
    expanded = expanded, cells = cells, comparisons = comparisons, chisq = chisq, targets = targets
  )
}
writeLines(toJSON(results, auto_unbox = TRUE, digits = NA, na = "string"), args[2])
