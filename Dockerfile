# kschedctl's own scheduler (spec.program: builtin), with the whole kschedctl CLI.
#
#   docker build -t kschedctl:0.1.0 .        # the default image of `program: builtin`
#   docker build -t REGISTRY/kschedctl:TAG . # then: kschedctl deploy NAME --program builtin --image ...
#
# The rendered forms run `kschedctl scheduler run --name=NAME ...` in it, as user 65532 with
# a read-only root filesystem.

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kschedctl ./kschedctl
COPY templates ./templates
COPY completions ./completions
# Wheels for kschedctl and its dependencies; the runtime stage installs only those.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile /wheels/*.whl \
    && rm -rf /wheels \
    && python -m compileall -q /usr/local/lib/python3.12/site-packages/kschedctl
USER 65532:65532
# 10259: /healthz, /readyz and /metrics over plain HTTP (--metrics-port).
EXPOSE 10259
ENTRYPOINT ["kschedctl"]
CMD ["scheduler", "run", "--help"]
