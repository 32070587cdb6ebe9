-- The read models of datasets and custom metrics: each dataset with its versions, each metric with its versions.
-- Same conventions as 001: TEXT ids and ISO times, INTEGER 0/1 for booleans.

CREATE TABLE datasets (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, name TEXT NOT NULL, versions INTEGER NOT NULL,
    latest_version_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX datasets_by_org ON datasets (org_id, name);

CREATE TABLE dataset_versions (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, dataset_id TEXT NOT NULL, dataset_name TEXT NOT NULL,
    number INTEGER NOT NULL, storage_key TEXT NOT NULL, train_examples INTEGER NOT NULL,
    validation_examples INTEGER NOT NULL, test_examples INTEGER NOT NULL, shape TEXT NOT NULL,
    has_images INTEGER NOT NULL, archived INTEGER NOT NULL, created_at TEXT NOT NULL, created_by TEXT NOT NULL
);
CREATE INDEX dataset_versions_by_dataset ON dataset_versions (dataset_id, number);
CREATE INDEX dataset_versions_by_org ON dataset_versions (org_id);

CREATE TABLE custom_metrics (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, name TEXT NOT NULL, versions INTEGER NOT NULL,
    latest_version_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX custom_metrics_by_org ON custom_metrics (org_id, name);

CREATE TABLE custom_metric_versions (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, metric_id TEXT NOT NULL, metric_name TEXT NOT NULL,
    number INTEGER NOT NULL, source TEXT NOT NULL, archived INTEGER NOT NULL, created_at TEXT NOT NULL,
    created_by TEXT NOT NULL
);
CREATE INDEX custom_metric_versions_by_metric ON custom_metric_versions (metric_id, number);
CREATE INDEX custom_metric_versions_by_org ON custom_metric_versions (org_id);
