# Builds and runs the app view on Debian bookworm, the same way the README's
# first command does on a bare machine.
FROM debian:bookworm
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN ./scripts/build.sh -DBULLETED_TESTS=OFF -DBULLETED_BENCH=OFF \
 && install -m 0755 build/bulleted-appview /usr/local/bin/bulleted-appview
VOLUME /data
EXPOSE 2584
ENTRYPOINT ["bulleted-appview"]
CMD ["serve", "--db", "/data/bulleted.db", "--bind", "0.0.0.0"]
