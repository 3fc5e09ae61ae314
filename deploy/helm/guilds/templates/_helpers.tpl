{{/* Names, labels and the environment every guilds process shares. */}}

{{- define "guilds.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "guilds.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's resource name: fullname-component, within 63 characters. */}}
{{- define "guilds.component" -}}
{{- printf "%s-%s" (include "guilds.fullname" .root | trunc (int (sub 62 (len .name))) | trimSuffix "-") .name -}}
{{- end -}}

{{- define "guilds.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "guilds.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ (default .Chart.AppVersion .Values.image.tag) | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: guilds
{{- end -}}

{{/* Selector labels of one component: {{ include "guilds.selector" (dict "root" . "component" "api") }} */}}
{{- define "guilds.selector" -}}
app.kubernetes.io/name: {{ include "guilds.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "guilds.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "guilds.configMapName" -}}
{{- include "guilds.component" (dict "root" . "name" "config") -}}
{{- end -}}

{{/* The Secret the processes read: the user's, or the chart's. */}}
{{- define "guilds.secretName" -}}
{{- if .Values.secret.existingSecret -}}
{{- .Values.secret.existingSecret -}}
{{- else -}}
{{- include "guilds.component" (dict "root" . "name" "secret") -}}
{{- end -}}
{{- end -}}

{{/* The Temporal frontend: the external address, else the in-chart dev server. */}}
{{- define "guilds.temporalAddress" -}}
{{- if .Values.temporal.address -}}
{{- .Values.temporal.address -}}
{{- else if .Values.temporal.dev.enabled -}}
{{- printf "%s:7233" (include "guilds.component" (dict "root" . "name" "temporal")) -}}
{{- end -}}
{{- end -}}

{{/*
The non-secret environment, NAME: value, one per line: the ConfigMap's data
and the migration Job's env (a pre-install hook runs before the ConfigMap exists).
*/}}
{{- define "guilds.configData" -}}
{{- $c := .Values.config -}}
{{- $addr := include "guilds.temporalAddress" . -}}
{{- if $addr }}
TEMPORAL_ADDRESS: {{ $addr | quote }}
{{- end }}
TEMPORAL_NAMESPACE: {{ .Values.temporal.namespace | quote }}
GUILDS_HTTP_ADDR: {{ printf "0.0.0.0:%d" (int .Values.api.port) | quote }}
GUILDS_AUTH_MODE: "token"
GUILDS_DATA_DIR: "/var/lib/guilds"
GUILDS_TEMPORAL_CODEC: {{ $c.temporalCodec | quote }}
GUILDS_LOG_LEVEL: {{ $c.logLevel | quote }}
{{- with $c.publicBaseURL }}
PUBLIC_BASE_URL: {{ . | quote }}
{{- end }}
{{- with $c.temporalUIURL }}
GUILDS_TEMPORAL_UI_URL: {{ . | quote }}
{{- end }}
{{- if $c.oauthAllowPrivate }}
GUILDS_OAUTH_ALLOW_PRIVATE: "1"
{{- end }}
{{- if $c.browserAllowPrivate }}
GUILDS_BROWSER_ALLOW_PRIVATE: "1"
{{- end }}
{{- with .Values.sandbox.dockerHost }}
DOCKER_HOST: {{ . | quote }}
{{- end }}
{{- with .Values.sandbox.image }}
GUILDS_SANDBOX_IMAGE: {{ . | quote }}
{{- end }}
{{- with .Values.sandbox.idle }}
GUILDS_SANDBOX_IDLE: {{ . | quote }}
{{- end }}
{{- with .Values.sandbox.scope }}
GUILDS_SANDBOX_SCOPE: {{ . | quote }}
{{- end }}
{{- with .Values.sandbox.pool }}
GUILDS_SANDBOX_POOL: {{ . | toString | quote }}
{{- end }}
{{- range $k, $v := $c.extra }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* The credential environment, NAME: base64, for the chart's Secret. */}}
{{- define "guilds.secretData" -}}
{{- $s := .Values.secret -}}
{{- with $s.databaseURL }}
DATABASE_URL: {{ . | b64enc | quote }}
{{- end }}
{{- with $s.redisURL }}
REDIS_URL: {{ . | b64enc | quote }}
{{- end }}
{{- with $s.encryptionKey }}
GUILDS_ENCRYPTION_KEY: {{ . | b64enc | quote }}
{{- end }}
{{- range $k, $v := $s.extra }}
{{ $k }}: {{ $v | toString | b64enc | quote }}
{{- end }}
{{- end -}}

{{/* Pod-level settings every guilds pod shares. */}}
{{- define "guilds.podCommon" -}}
automountServiceAccountToken: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
{{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* The writable folders of a read-only root filesystem. */}}
{{- define "guilds.volumes" -}}
- name: data
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "guilds.volumeMounts" -}}
- name: data
  mountPath: /var/lib/guilds
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* Rolls the pods when the configuration or the chart's Secret changes. */}}
{{- define "guilds.checksums" -}}
checksum/config: {{ include "guilds.configData" . | sha256sum }}
{{- if not .Values.secret.existingSecret }}
checksum/secret: {{ include "guilds.secretData" . | sha256sum }}
{{- end }}
{{- end -}}
