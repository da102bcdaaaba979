# switchyard in a from-scratch image: the static binary and nothing else (no
# shell, no package manager, no CA certificates: switchyard makes no TLS calls).
# Nothing is pulled, so it builds on a machine without a registry. Build the
# binary on the host first:
#
#   CGO_ENABLED=0 go build -o switchyard ./cmd/switchyard
#   docker build -t switchyard .
#   docker run --rm -p 50051:50051 switchyard serve
#   docker run --rm -p 8000:8000 switchyard engine-sim --router HOST:50051
#
# The same image runs the router (serve) and the simulated engines (engine-sim).
FROM scratch
COPY switchyard /switchyard
# nobody:nogroup; no port below 1024 is used.
USER 65534:65534
EXPOSE 50051 8000 5557 5558
ENTRYPOINT ["/switchyard"]
CMD ["serve"]
