CREATE TABLE "shard_lease" (
	"shard_id" integer PRIMARY KEY,
	"runner_address" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mailbox" (
	"id" text PRIMARY KEY,
	"entity_id" text NOT NULL,
	"shard_id" integer NOT NULL,
	"tag" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"deliveries" integer DEFAULT 0 NOT NULL,
	"enqueued_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "mailbox_shard_status" ON "mailbox" USING btree ("shard_id","status");
