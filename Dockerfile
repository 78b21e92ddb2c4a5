# The app view in a container: built with the same install and build scripts
# as the README's commands on a bare Debian bookworm machine, run as a
# non-root user with the database on a volume.
#
#   docker build -t bulleted-appview .
#   docker run -p 2584:2584 -v bulleted-data:/data bulleted-appview
#   docker run ... -e BULLETED_MODE=pds -e BULLETED_SESSION_KEY=... -e BULLETED_FIREHOSE=wss://...
#   docker run ... -v ./appview.json:/etc/bulleted/appview.json -e BULLETED_CONFIG=/etc/bulleted/appview.json
#
# Configuration: any BULLETED_* variable (config/appview.example.json names
# them), or a file through BULLETED_CONFIG; flags after the image name
# replace the default command.

# ---- build: the project's own scripts, Release, without tests and benchmarks
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN ./scripts/build.sh --target bulleted-appview -- -DBULLETED_TESTS=OFF -DBULLETED_BENCH=OFF

# ---- run: the shared libraries the binary links, nothing else
# (tests/scripts/runtime_image_libs.py checks the list against the binary's
# NEEDED entries on every test run)
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcpprest2.10 libsqlite3-0 libcbor0.8 libsecp256k1-1 libspdlog1.10 libfmt9 libicu72 libexpat1 \
      libjemalloc2 libssl3 ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin bulleted \
 && mkdir -p /data /etc/bulleted && chown bulleted:bulleted /data
COPY --from=build /src/build/bulleted-appview /usr/local/bin/bulleted-appview
COPY config/appview.example.json /etc/bulleted/appview.example.json
USER bulleted
WORKDIR /data
VOLUME /data
ENV BULLETED_DB=/data/bulleted.db \
    BULLETED_BIND=0.0.0.0 \
    BULLETED_PORT=2584
EXPOSE 2584
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${BULLETED_PORT}/healthz" || exit 1
# SIGTERM stops it gracefully (in-flight writes finish, the cursor is kept).
STOPSIGNAL SIGTERM
ENTRYPOINT ["bulleted-appview"]
CMD ["serve"]
