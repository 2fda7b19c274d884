# The studio in a container, for people who run the CLI (`studio demo`, `doctor`, `run
# --print-prompt`), the bot outside the composite action (action.yml, docs/install.md), or the
# GitHub App server (its default command: `docker run -p 8080:8080 -e STUDIO_APP_ID ... studio`, docs/serve.md):
# a static binary with git and the pinned Codex CLI.
#
# Base images are pinned by version tag: their digests could not be resolved from the offline
# machine this was written on; pin them by digest (`docker buildx imagetools inspect`) before
# publishing a release.
FROM golang:1.26-bookworm AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/studio ./cmd/studio

# The App server alone (`docker build --target serve`, docs/serve.md): it runs no agent and no git
# (it reads repositories through the API and hands every Codex run to Actions), so it carries
# neither Node nor the Codex CLI nor git: the binary and the CA certificates GitHub's TLS needs.
FROM debian:bookworm-slim AS serve
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --shell /usr/sbin/nologin studio
COPY --from=build /out/studio /usr/local/bin/studio
USER studio
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/studio"]
CMD ["serve"]

# The default image: the CLI, the action mode and the server, with git and the pinned Codex CLI.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && npm install -g @openai/codex@0.171.0 \
 && npm cache clean --force
COPY --from=build /out/studio /usr/local/bin/studio
# studio-agent: the unprivileged account Codex and verification run as (agent-user input,
# docs/security.md) when the studio runs as root. studio: the default user of the image.
RUN useradd --system --no-create-home --shell /usr/sbin/nologin studio-agent \
 && useradd --create-home --shell /bin/bash studio
# Non-root by default: the CLI needs nothing more. The action mode (`studio action`) confines the
# agent only when the studio is root (it switches the agent to studio-agent and hands it the
# workspace), so run that mode with `docker run --user 0`; as this user it runs the agent
# unconfined and says so.
USER studio
WORKDIR /home/studio
# `studio serve` listens here (--listen; docs/serve.md). It runs no agent: this user is enough.
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/studio"]
# With no arguments the image is the App server; any command given replaces it (`docker run
# image demo`, `docker run --user 0 image action`).
CMD ["serve"]
