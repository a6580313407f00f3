CREATE TABLE "run_lease" (
	"run_id" uuid PRIMARY KEY NOT NULL,
	"owner_id" text NOT NULL,
	"valid_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "waypoint" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"step_index" integer NOT NULL,
	"state" jsonb NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "run_lease" ADD CONSTRAINT "run_lease_run_id_workflow_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "workflow_run"("id") ON DELETE CASCADE;
--> statement-breakpoint
CREATE INDEX "waypoint_run_idx" ON "waypoint" USING btree ("run_id","step_index");
--> statement-breakpoint
CREATE INDEX "run_lease_valid_until_idx" ON "run_lease" USING btree ("valid_until");
