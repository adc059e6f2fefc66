# gnuplot -e "data='summary.tsv'; out='fire-lag.png'" fire_lag.gp
# Columns of summary.tsv: n runs, then med/min/max of p50_ms (3-5), p99_ms (6-8), max_ms (9-11).
set terminal pngcairo size 900,560 font ",11"
set output out
if (!exists("note")) note = ""
set title "cronwheel fire lag: scheduled instant -> executor receives /run (N jobs firing every second)\n".note
set xlabel "N (jobs due at the same instant each second)"
set ylabel "lag (ms, log scale)"
set logscale xy
set xtics (1000, 2000, 5000, 10000)
set grid
set key top left
set autoscale x
set offsets graph 0.06, graph 0.06, 0, 0
plot data using 1:3:4:5 with yerrorlines lw 2 pt 7 title "p50", \
     data using 1:6:7:8 with yerrorlines lw 2 pt 5 title "p99", \
     data using 1:9:10:11 with yerrorlines lw 2 pt 9 title "max", \
     50 with lines dt 2 lc rgb "red" title "goal: p99 <= 50 ms"
