{{/*
Helpers. The chart keeps to a small subset of Helm's template language (fields, if/else, with, range, define,
include and a handful of functions) so that test/deploy/helm-chart.test.ts can render it without Helm.
*/}}

{{- define "lookout.labels" -}}
app.kubernetes.io/name: lookout
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "lookout.selector" -}}
app.kubernetes.io/name: lookout
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "lookout.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* "true" when the KServe model serving resources are deployed. */}}
{{- define "lookout.kserve" -}}
{{- if and .Values.modelServing.enabled (not .Values.remoteDetector.url) -}}
true
{{- end -}}
{{- end }}

{{/* "true" when the bundled model server (npm run model-server) is deployed. */}}
{{- define "lookout.modelServer" -}}
{{- if and .Values.modelServer.enabled (not .Values.remoteDetector.url) (not .Values.modelServing.enabled) -}}
true
{{- end -}}
{{- end }}

{{/* REMOTE_DETECTOR_URL: the external URL, else the model server this chart deploys, else empty. */}}
{{- define "lookout.remoteDetectorUrl" -}}
{{- if .Values.remoteDetector.url -}}
{{ .Values.remoteDetector.url }}
{{- else if eq (include "lookout.kserve" .) "true" -}}
http://{{ .Release.Name }}-detector-predictor.{{ .Release.Namespace }}.svc.cluster.local
{{- else if eq (include "lookout.modelServer" .) "true" -}}
http://{{ .Release.Name }}-model-server:{{ .Values.modelServer.port | int }}
{{- end -}}
{{- end }}

{{/* PPE_ENDPOINT: the external detector, else the one this chart deploys, else empty. */}}
{{- define "lookout.ppeEndpoint" -}}
{{- if .Values.ppe.endpoint -}}
{{ .Values.ppe.endpoint }}
{{- else if .Values.ppe.server.enabled -}}
http://{{ .Release.Name }}-ppe:{{ .Values.ppe.server.port | int }}
{{- end -}}
{{- end }}

{{/*
ALLOWED_HOSTS of the API server and the processor (they share <release>-config): localhost, the in-cluster names of
their Services, the Ingress host and security.allowedHosts. Any other Host is refused (DNS rebinding); IP addresses,
as kubelet probes send, always pass.
*/}}
{{- define "lookout.allowedHosts" -}}
localhost,{{ .Release.Name }}-api,{{ .Release.Name }}-api.{{ .Release.Namespace }},{{ .Release.Name }}-api.{{ .Release.Namespace }}.svc,{{ .Release.Name }}-api.{{ .Release.Namespace }}.svc.cluster.local
{{- if .Values.processor.enabled -}}
,{{ .Release.Name }}-processor,{{ .Release.Name }}-processor.{{ .Release.Namespace }},{{ .Release.Name }}-processor.{{ .Release.Namespace }}.svc,{{ .Release.Name }}-processor.{{ .Release.Namespace }}.svc.cluster.local
{{- end }}
{{- if .Values.ingress.enabled }},{{ .Values.ingress.host }}{{ end }}
{{- if .Values.security.originalNames -}}
,neuroface-backend,neuroface-backend.{{ .Release.Namespace }},neuroface-backend.{{ .Release.Namespace }}.svc,neuroface-backend.{{ .Release.Namespace }}.svc.cluster.local
{{- end }}
{{- range .Values.security.allowedHosts }},{{ . }}{{ end }}
{{- end }}

{{/* ALLOWED_HOSTS of the bundled model server: localhost and its Service's in-cluster names. */}}
{{- define "lookout.modelServerHosts" -}}
localhost,{{ .Release.Name }}-model-server,{{ .Release.Name }}-model-server.{{ .Release.Namespace }},{{ .Release.Name }}-model-server.{{ .Release.Namespace }}.svc,{{ .Release.Name }}-model-server.{{ .Release.Namespace }}.svc.cluster.local
{{- end }}

{{/* ALLOWED_HOSTS of the PPE detector: localhost and its Service's in-cluster names. */}}
{{- define "lookout.ppeHosts" -}}
localhost,{{ .Release.Name }}-ppe,{{ .Release.Name }}-ppe.{{ .Release.Namespace }},{{ .Release.Name }}-ppe.{{ .Release.Namespace }}.svc,{{ .Release.Name }}-ppe.{{ .Release.Namespace }}.svc.cluster.local
{{- end }}

{{/* ALLOWED_ORIGINS: the original frontend's page (security.originalNames), then security.allowedOrigins, comma separated. */}}
{{- define "lookout.allowedOrigins" -}}
{{- if .Values.security.originalNames }}http://localhost:4200,http://127.0.0.1:4200{{ if .Values.security.allowedOrigins }},{{ end }}{{ end }}
{{- range $i, $origin := .Values.security.allowedOrigins }}{{ if $i }},{{ end }}{{ $origin }}{{ end }}
{{- end }}

{{/* SIGHTINGS_SOURCES: sightings.sources, comma separated. */}}
{{- define "lookout.sightingsSources" -}}
{{- range $i, $source := .Values.sightings.sources }}{{ if $i }},{{ end }}{{ $source }}{{ end }}
{{- end }}

{{/* "true" when DATABASE_URL comes from a Secret (database.url or database.existingSecret): PostgreSQL. */}}
{{- define "lookout.database" -}}
{{- if or .Values.database.url .Values.database.existingSecret -}}
true
{{- end -}}
{{- end }}

{{- define "lookout.databaseSecret" -}}
{{ .Values.database.existingSecret | default (printf "%s-database" .Release.Name) }}
{{- end }}

{{/*
Refusals values.schema.json makes too, here with a message in words (and for installs that skip the schema,
e.g. helm --skip-schema-validation). Included by api-deployment.yaml.
*/}}
{{- define "lookout.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (ne (include "lookout.database" .) "true") -}}
{{- fail "replicaCount > 1 needs a PostgreSQL server: set database.url or database.existingSecret (DATABASE_URL). Without one each API pod would open the embedded database in /data/db, which one process only may open." -}}
{{- end -}}
{{- end }}

{{- define "lookout.chatSecret" -}}
{{ .Values.chat.existingSecret | default (printf "%s-chat" .Release.Name) }}
{{- end }}

{{/* "true" when CHAT_TOKEN_FILE is the token of the chat Secret. */}}
{{- define "lookout.chatTokenFromSecret" -}}
{{- if and (ne .Values.chat.tokenSource "serviceAccount") (or (eq .Values.chat.tokenSource "secret") .Values.chat.token) -}}
true
{{- end -}}
{{- end }}

{{- define "lookout.kafkaSecret" -}}
{{ .Values.kafka.sasl.existingSecret | default (printf "%s-kafka" .Release.Name) }}
{{- end }}

{{/* "true" when a SASL password is mounted (KAFKA_PASSWORD_FILE). */}}
{{- define "lookout.kafkaPassword" -}}
{{- if or .Values.kafka.sasl.password .Values.kafka.sasl.existingSecret -}}
true
{{- end -}}
{{- end }}

{{/* Volume mounts for the Kafka CA and SASL password, shared by the API server and the processor. */}}
{{- define "lookout.kafkaVolumeMounts" -}}
{{- if or .Values.kafka.tls.caSecret .Values.kafka.tls.caConfigMap }}
- name: kafka-ca
  mountPath: /etc/lookout/kafka-ca
  readOnly: true
{{- end }}
{{- if eq (include "lookout.kafkaPassword" .) "true" }}
- name: kafka-sasl
  mountPath: /etc/lookout/kafka-sasl
  readOnly: true
{{- end }}
{{- end }}

{{- define "lookout.kafkaVolumes" -}}
{{- if .Values.kafka.tls.caSecret }}
- name: kafka-ca
  secret:
    secretName: {{ .Values.kafka.tls.caSecret }}
    items:
      - key: {{ .Values.kafka.tls.caKey }}
        path: ca.crt
{{- else if .Values.kafka.tls.caConfigMap }}
- name: kafka-ca
  configMap:
    name: {{ .Values.kafka.tls.caConfigMap }}
    items:
      - key: {{ .Values.kafka.tls.caKey }}
        path: ca.crt
{{- end }}
{{- if eq (include "lookout.kafkaPassword" .) "true" }}
- name: kafka-sasl
  secret:
    secretName: {{ include "lookout.kafkaSecret" . }}
    items:
      - key: {{ if .Values.kafka.sasl.existingSecret }}{{ .Values.kafka.sasl.existingSecretKey }}{{ else }}password{{ end }}
        path: password
{{- end }}
{{- end }}

{{/* extraEnv entries (strings; the schema refuses secrets there). */}}
{{- define "lookout.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
