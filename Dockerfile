FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 recheck
WORKDIR /app
COPY pyproject.toml README.md ./
COPY recheck recheck
COPY reviews reviews
COPY findings findings
RUN pip install --no-cache-dir .
COPY . .
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
USER recheck
EXPOSE 8000
