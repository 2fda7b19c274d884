# Build a static binary, then ship it with git (the action commits and pushes with the git CLI)
# and the Codex CLI (pinned). Base images are pinned by version tag: their digests could not be
# resolved from the offline machine this was written on; pin them by digest (`docker buildx
# imagetools inspect`) before publishing a release.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/studio ./cmd/studio

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && npm install -g @openai/codex@0.171.0 \
 && npm cache clean --force
COPY --from=build /out/studio /usr/local/bin/studio
# The unprivileged account Codex and verification run as (agent-user input, docs/security.md).
# The studio itself stays root: it switches the agent to this uid and gives it the workspace.
RUN useradd --system --no-create-home --shell /usr/sbin/nologin studio-agent
# No USER or WORKDIR: GitHub's Docker actions run as the runner's user in $GITHUB_WORKSPACE.
ENTRYPOINT ["/usr/local/bin/studio"]
