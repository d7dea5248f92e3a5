# syntax=docker/dockerfile:1
#
# The stateless-mcp reference server.
#
#   docker build -t stateless-mcp .
#   docker run --rm -p 8080:8080 stateless-mcp
#
# Build stage: the official Rust image, with BuildKit caches for the registry and target/.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --features reference-server --bin stateless-mcp \
 && install -D -m 0755 target/release/stateless-mcp /out/stateless-mcp

# Run stage: a small Debian base, no shell tools needed at run time, a non-root user.
# ca-certificates: the root certificates the OAuth client verifies an https:// issuer, JWKS
# or introspection endpoint with (read from /etc/ssl/certs; SSL_CERT_FILE overrides them).
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin mcp
COPY --from=build /out/stateless-mcp /usr/local/bin/stateless-mcp
USER 10001:10001
# Listen on every interface inside the container; logs as JSON lines on stderr.
ENV MCP_LISTEN=0.0.0.0:8080 \
    MCP_LOG_FORMAT=json
EXPOSE 8080
# SIGTERM starts the graceful drain (readiness 503, listener closed after the drain delay,
# in-flight requests finish); the process then exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/stateless-mcp"]
