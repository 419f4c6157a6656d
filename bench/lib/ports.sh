# Loopback ports for the serving benches (sourced by bench/lib/serve_load.sh, bench/http_libs.sh;
# both define die()).
# free_port: a TCP port nothing listens on now.
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# wait_port PORT: until something listens on PORT (at most 30 s).
wait_port() {
  for _ in $(seq 1 300); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  die "nothing listened on port $1"
}
