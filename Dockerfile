# kschedctl's own scheduler (spec.program: builtin), with the whole kschedctl CLI.
#
#   docker build -t kschedctl:0.1.0 .        # the default image of `program: builtin`
#   docker build -t REGISTRY/kschedctl:TAG . # then: kschedctl deploy NAME --program builtin --image ...
#
# Reproducible: every Python package is installed from requirements/*.txt with
# --require-hashes (regenerate with requirements/lock), bytecode is compiled with hash-based
# invalidation (no timestamps), and the base image is pinned by its index digest (multi-arch).
# To move to a newer base: `docker buildx imagetools inspect python:3.12-slim` prints the
# current digest; pass it with --build-arg PYTHON_DIGEST=sha256:... or update the default.
#
# The rendered forms run `kschedctl scheduler run --name=NAME ...` in it, as user 65532 with
# a read-only root filesystem.

ARG PYTHON_IMAGE=python:3.12-slim
# The index digest of PYTHON_IMAGE to build on (empty: the tag as it is that day). This one is
# the python:3.12-slim index of August 2026 as other public Dockerfiles pin it; this project's
# CI has no container registry to re-resolve it against.
ARG PYTHON_DIGEST=sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

FROM ${PYTHON_IMAGE}${PYTHON_DIGEST:+@}${PYTHON_DIGEST} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY requirements ./requirements
# The build backend, hash-checked, then kschedctl's wheel without fetching anything else.
RUN pip install --require-hashes --no-deps -r requirements/build.txt
COPY pyproject.toml README.md LICENSE ./
COPY kschedctl ./kschedctl
COPY templates ./templates
COPY completions ./completions
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}${PYTHON_DIGEST:+@}${PYTHON_DIGEST}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kschedctl" \
      org.opencontainers.image.description="kschedctl's own Kubernetes scheduler and the kschedctl CLI" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${PYTHON_IMAGE}"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
COPY requirements/runtime.txt /tmp/runtime.txt
COPY --from=build /wheels /wheels
# Dependencies exactly as locked, then kschedctl itself (--no-deps: nothing unlocked sneaks
# in); bytecode for every installed package, so a read-only root filesystem starts fast.
RUN pip install --require-hashes --no-deps -r /tmp/runtime.txt \
    && pip install --no-deps /wheels/*.whl \
    && rm -rf /wheels /tmp/runtime.txt \
    && python -m compileall -q --invalidation-mode unchecked-hash \
       "$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
USER 65532:65532
# 10259: /healthz, /readyz and /metrics over plain HTTP (--metrics-port).
EXPOSE 10259
ENTRYPOINT ["kschedctl"]
CMD ["scheduler", "run", "--help"]
