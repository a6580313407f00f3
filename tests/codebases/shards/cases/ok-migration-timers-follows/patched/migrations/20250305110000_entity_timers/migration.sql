CREATE TABLE "entity_timer" (
	"id" text PRIMARY KEY,
	"entity_id" text NOT NULL,
	"shard_id" integer NOT NULL,
	"tag" text NOT NULL,
	"fire_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "entity_timer_shard_fire" ON "entity_timer" USING btree ("shard_id","fire_at");
