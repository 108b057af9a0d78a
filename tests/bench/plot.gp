# tests/bench/run.sh draws results.png with this: start latency, peak RSS,
# and network throughput, one bar chart each. Inputs (tab separated):
#   startdata: runtime, median ms, peak RSS KiB;  netdata: path, GB/s
set terminal pngcairo size 1500,500 font ",10"
set output outfile
set datafile separator "\t"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set xtics rotate by -25 scale 0
set yrange [0:*]
unset key
set multiplot layout 1,3 title "agentrun benchmark (make bench)"
set title "start latency of /bin/true (median, ms)"
plot startdata using 2:xtic(1) linecolor rgb "#3465a4", \
     '' using 0:2:(sprintf("%.1f", $2)) with labels offset 0,0.7 notitle
set title "peak RSS (median, MiB)"
plot startdata using ($3 / 1024):xtic(1) linecolor rgb "#73d216", \
     '' using 0:($3 / 1024):(sprintf("%.1f", $3 / 1024)) with labels offset 0,0.7 notitle
set title "bulk throughput (median, GB/s)"
plot netdata using 2:xtic(1) linecolor rgb "#f57900", \
     '' using 0:2:(sprintf("%.2f", $2)) with labels offset 0,0.7 notitle
unset multiplot
