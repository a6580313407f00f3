ALTER TABLE "workflow_run" ADD COLUMN "labels" text[] DEFAULT '{}'::text[] NOT NULL;
