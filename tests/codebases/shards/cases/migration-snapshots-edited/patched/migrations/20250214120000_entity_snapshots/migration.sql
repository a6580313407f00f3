CREATE TABLE "entity_snapshot" (
	"id" text PRIMARY KEY,
	"entity_id" text NOT NULL,
	"shard_id" integer NOT NULL,
	"version" integer NOT NULL,
	"state" jsonb NOT NULL,
	"entity_type" text DEFAULT 'unknown' NOT NULL,
	"created_at" bigint NOT NULL
);
