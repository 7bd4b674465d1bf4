FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 recheck
WORKDIR /app
COPY . .
# Editable: the app runs from this tree (templates, demo bundle), the install brings its dependencies.
RUN pip install --no-cache-dir -e .
# The image writes no bytecode at run time (PYTHONDONTWRITEBYTECODE, and /app is not its user's):
# compiled once here, or every command, worker and web process compiles Recheck's modules anew.
RUN python -m compileall -q -x '/(tests|bench|docs)/' /app
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && mkdir -p /data/mirrors && chown recheck /data/mirrors
# A named volume mounted here starts with this owner, so the worker can write its mirrors.
USER recheck
EXPOSE 8000
