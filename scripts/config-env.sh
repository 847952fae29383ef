# Sourced by the scripts that validate exporter-config/*.yaml: the variables those configs take
# endpoints and secrets from, set to harmless loopback values.
tmp_env_dir=$(mktemp -d)
export OTLP_ENDPOINT=127.0.0.1:14317 OTLP_TOKEN=test-token OTLP_HTTP_URL=http://127.0.0.1:14318 \
  PROMETHEUS_REMOTE_WRITE_URL=http://127.0.0.1:19090/api/v1/write \
  PROMETHEUS_OTLP_URL=http://127.0.0.1:19090/api/v1/otlp GATEWAY_TOKEN=test-gateway-token \
  TLS_CERT_FILE="$tmp_env_dir/cert.pem" TLS_KEY_FILE="$tmp_env_dir/key.pem" ITL_QUEUE_DIR="$tmp_env_dir/queue"
# Files for TLS_CERT_FILE and TLS_KEY_FILE. The ocb-built distribution these scripts validate reads
# them only at start, so empty ones do; otelcol-itl itself (its converters, which ocb cannot list)
# refuses at validate a file it cannot read, or a certificate and key that are not a pair, and its
# own tests write a real certificate and key.
: > "$tmp_env_dir/cert.pem"
: > "$tmp_env_dir/key.pem"
