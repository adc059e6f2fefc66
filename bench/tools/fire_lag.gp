# gnuplot -e "data='summary.tsv'; out='fire-lag.png'; note='...'; nseries=S; nmine=M" fire_lag.gp
# summary.tsv (fire_lag_summary.py): S blocks, one per series (this run's, then a baseline's), each with a
# header line (its title in quotes first) and one line per N: n runs, then med/min/max of p50_ms (3-5),
# p99_ms (6-8), max_ms (9-11). One series: p50, p99 and max with their range over the runs; several:
# p50 (solid) and p99 (dashed) of each, one colour per series, the title of each in the legend; the
# series after the first M (a baseline's) with open points.
if (!exists("note")) note = ""
if (!exists("nseries")) nseries = 1
width = nseries <= 1 ? 1000 : 1400
set terminal pngcairo size width,620 font ",11"
set output out
if (!exists("nmine")) nmine = nseries
set title "cronwheel fire lag: scheduled instant -> executor receives /run (N jobs firing every second)\n".note
set xlabel "N (jobs due at the same instant each second)"
set ylabel "lag (ms, log scale)"
set logscale xy
set xtics (100, 200, 500, 1000, 2000, 5000, 10000, 20000)
set grid
set key top left
set autoscale x
set offsets graph 0.06, graph 0.06, 0, 0
if (nseries <= 1) {
  plot data index 0 using 1:3:4:5 with yerrorlines lw 2 pt 7 title "p50", \
       data index 0 using 1:6:7:8 with yerrorlines lw 2 pt 5 title "p99", \
       data index 0 using 1:9:10:11 with yerrorlines lw 2 pt 9 title "max", \
       50 with lines dt 2 lc rgb "red" title "goal: p99 <= 50 ms"
} else {
  set key outside right top box
  plot for [i=0:nseries-1] data index i using 1:3:4:5 with yerrorlines lw 2 lc i+1 pt (i < nmine ? 7 : 6) \
         title columnheader(1)." p50", \
       for [i=0:nseries-1] data index i using 1:6:7:8 with yerrorlines lw 2 lc i+1 dt 2 pt (i < nmine ? 5 : 4) \
         title columnheader(1)." p99", \
       50 with lines dt 3 lc rgb "red" title "goal: p99 <= 50 ms"
}
