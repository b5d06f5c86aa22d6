# bench/plot.gp: throughput of one hot session against clients, drawn by
# bench/run.sh from the medians of its hot scenario:
#   gnuplot -e "datafile='throughput.dat'; outfile='throughput.png'" bench/plot.gp
# datafile: a header line of series names, then one line per client count
# (clients, then one tps column per series).
if (!exists("datafile")) datafile = 'throughput.dat'
if (!exists("outfile")) outfile = 'throughput.png'
if (!exists("seconds")) seconds = 10

set terminal pngcairo size 720,440 font "DejaVu Sans,9" noenhanced
set output outfile
set title sprintf("booking: one hot session, transactions/s against clients\n(pgbench -M prepared, fsync and synchronous_commit on, median of 3 x %g s)", seconds)
set xlabel "clients"
set ylabel "transactions per second"
set logscale x 2
set xtics ("1" 1, "8" 8, "32" 32, "64" 64)
set xrange [0.8:80]
set yrange [0:*]
set grid ytics
set key outside right center
set style data linespoints
# one colour per series, in run.sh's column order: the ceiling dashed, the
# floors dotted
set linetype 1 lc rgb "#000000" dt 2 lw 2 pt 7 ps 0.8
set linetype 2 lc rgb "#0060c0" lw 3 pt 7 ps 0.9
set linetype 3 lc rgb "#d03030" lw 2 pt 7 ps 0.8
set linetype 4 lc rgb "#e08000" lw 2 pt 7 ps 0.8
set linetype 5 lc rgb "#808080" dt 3 lw 2 pt 6 ps 0.8
set linetype 6 lc rgb "#10a040" lw 3 pt 7 ps 0.9
set linetype 7 lc rgb "#10a040" dt 3 lw 2 pt 6 ps 0.8

stats datafile skip 1 using 1 nooutput
columns = STATS_columns
plot for [col = 2:columns] datafile using 1:col title columnheader(col) lt (col - 1)
